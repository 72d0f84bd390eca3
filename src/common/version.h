/* version.h - the Tessera release. */
#ifndef TESS_VERSION_H
#define TESS_VERSION_H

#define TESSERA_VERSION "0.1.0"

#endif
