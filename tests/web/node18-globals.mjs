/* node18-globals.mjs - loaded before each web module test (t6001, node
 * --import): takes away the globals that node has only from 19 on, so that
 * the tests pass on Debian 12's node (18) whatever node runs them. */
delete globalThis.crypto;
