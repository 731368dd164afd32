/* ingest_fixture.h — shared by ingest_test.c and ingest_service_test.c:
 * the entries of a folder, hidden ones aside (-1 when it cannot be read),
 * to see what an ingest left behind. */
#ifndef TB_INGEST_FIXTURE_H
#define TB_INGEST_FIXTURE_H

#include <dirent.h>

static inline int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    if (!d) return -1;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

#endif
