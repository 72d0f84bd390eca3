/* main.js - the entry of the bundle (app.js): defines <tessera-app>,
 * which index.html holds, and through it everything a first visit needs.
 * Pages come later, on demand (pages.js). */
import './tessera-app.js';
