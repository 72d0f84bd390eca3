/* work_user.h - the user that code in a session runs as: the runner drops
 * to it (its --uid/--gid, default these), the agent gives it
 * /home/work, and the manager makes what it writes into virtual folders
 * (folders, directories, uploaded files) its, so that sessions can use
 * them. */
#ifndef TESS_WORK_USER_H
#define TESS_WORK_USER_H

#define TESSERA_WORK_UID 1000
#define TESSERA_WORK_GID 1000

#endif
