/* image_cli.h - `tessera agent image ls|import|rm|gc|inspect`: the agent's
 * local image store (image.h) from the command line. */
#ifndef TESSERA_AGENT_IMAGE_CLI_H
#define TESSERA_AGENT_IMAGE_CLI_H

/* argv[0] is "image"; returns the exit status: 0, 1 (error: printed) or 2
 * (usage). */
int agent_image_main(int argc, char **argv);

#endif
