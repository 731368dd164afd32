/* replay_main.c — runs a fuzz target over corpus files without libFuzzer.
 *
 * Usage: <target>_replay DIR_OR_FILE...   Every regular file found (one
 * level deep) is fed once to LLVMFuzzerTestOneInput. A target signals a
 * broken invariant by aborting, so reaching the end means every input
 * passed; an empty or unreadable corpus is a failure so a moved folder is
 * not mistaken for success. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;

    if (!f) return -1;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return -1;
    }
    /* An exact-size heap copy lets ASan catch reads past the input. */
    buf = malloc(n ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    long count = 0;

    for (int i = 1; i < argc; i++) {
        struct stat st;
        DIR *dir;
        struct dirent *de;

        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: cannot read %s\n", argv[i]);
            return 1;
        }
        if (S_ISREG(st.st_mode)) {
            if (replay_file(argv[i]) != 0) return fprintf(stderr, "replay: cannot read %s\n", argv[i]), 1;
            count++;
            continue;
        }
        if (!(dir = opendir(argv[i]))) return fprintf(stderr, "replay: cannot open %s\n", argv[i]), 1;
        while ((de = readdir(dir)) != NULL) {
            char path[4096];
            if (de->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", argv[i], de->d_name);
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
            if (replay_file(path) != 0) {
                closedir(dir);
                return fprintf(stderr, "replay: cannot read %s\n", path), 1;
            }
            count++;
        }
        closedir(dir);
    }
    printf("%ld inputs replayed\n", count);
    return count > 0 ? 0 : 1;
}
