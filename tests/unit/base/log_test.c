/* log_test — levels parse and filter; a line is written in one piece. */
#include "../../../server/base/log.c"
#include "harness.h"

#include <fcntl.h>

static void test_levels(void)
{
    CHECK_EQ_INT(log_level_parse("debug"), LOG_LEVEL_DEBUG);
    CHECK_EQ_INT(log_level_parse("error"), LOG_LEVEL_ERROR);
    CHECK_EQ_INT(log_level_parse("loud"), -1);
}

static void test_filter_and_format(void)
{
    char path[] = "/tmp/tb_log_XXXXXX";
    int fd = mkstemp(path), saved = dup(STDERR_FILENO);
    REQUIRE(fd >= 0);
    dup2(fd, STDERR_FILENO);
    log_set_level(LOG_LEVEL_WARN);
    log_write(LOG_LEVEL_INFO, "test", "hidden %d", 1);
    log_write(LOG_LEVEL_WARN, "test", "shown %d", 2);
    dup2(saved, STDERR_FILENO);
    close(saved);
    char buf[512] = "";
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    REQUIRE(n > 0);
    CHECK(strstr(buf, "hidden") == NULL);
    CHECK(strstr(buf, "warn  test     shown 2\n") != NULL);
    log_set_level(LOG_LEVEL_INFO);
}

int main(void)
{
    RUN(test_levels);
    RUN(test_filter_and_format);
    return harness_done("log_test");
}
