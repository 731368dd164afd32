/* version.h — the one place the version string lives (the --version line,
 * /api/health). A header without a module: nothing else belongs here. */
#ifndef TB_VERSION_H
#define TB_VERSION_H

#define TRACEBOARD_VERSION "0.1.0"

#endif
