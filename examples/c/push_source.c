/* A device program that reports a sensor reading to an ACP monitor, in its own poll(2) loop.
 *
 * Every 10 ms it takes a new reading and pushes it to the source; the source sends the freshest
 * reading whenever its controller says so, and drops readings that were overtaken. The loop
 * waits on the source's socket and on the earlier of the source's timeout and the next reading.
 *
 * Build against the installed library (`make -C crates/acp-ffi install`, see its Makefile):
 *   cc $(pkg-config --cflags acp) examples/c/push_source.c $(pkg-config --libs acp) -o push_source
 * Run against `acp monitor --listen 127.0.0.1:7200 --print-updates`:
 *   ./push_source 127.0.0.1:7200 5
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acp.h"

#define READING_EVERY_MS 10

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fail(const char *what) {
  fprintf(stderr, "push_source: %s: %s\n", what, acp_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MONITOR_HOST:PORT [SECONDS] [CONTROLLER]\n", argv[0]);
    return 2;
  }
  const char *monitor = argv[1];
  double seconds = argc > 2 ? atof(argv[2]) : 5.0;
  const char *controller = argc > 3 ? argv[3] : "acp+";

  acp_options options = acp_options_default();
  options.max_rate = 1000.0 / READING_EVERY_MS; /* no point sending faster than we sense */
  acp_source *source = NULL;
  if (acp_source_new(monitor, controller, &options, &source) != ACP_OK) {
    return fail("cannot create the source");
  }

  long long end = now_ms() + (long long)(seconds * 1000);
  long long next_reading = now_ms();
  unsigned reading = 0;
  int status = 0;
  for (;;) {
    long long now = now_ms();
    if (now >= end) {
      break;
    }
    if (now >= next_reading) {
      char payload[64];
      reading++;
      /* A made-up temperature: the reading's number is what the monitor checks. */
      int len = snprintf(payload, sizeof payload, "reading %u temp=%.2f", reading,
                         20.0 + (reading % 50) * 0.01);
      if (acp_source_push(source, (const uint8_t *)payload, (size_t)len) != ACP_OK) {
        status = fail("push");
        break;
      }
      next_reading += READING_EVERY_MS;
    }
    int timeout = -1;
    if (acp_source_drive(source, &timeout) != ACP_OK) {
      status = fail("drive");
      break;
    }
    long long until_reading = next_reading - now_ms();
    if (until_reading < 0) {
      until_reading = 0;
    }
    if (timeout < 0 || timeout > until_reading) {
      timeout = (int)until_reading;
    }
    struct pollfd fd = {.fd = acp_source_fd(source), .events = POLLIN};
    if (poll(&fd, 1, timeout) < 0 && errno != EINTR) {
      perror("poll");
      status = 1;
      break;
    }
  }

  acp_stats stats;
  if (status == 0 && acp_source_stats(source, &stats) != ACP_OK) {
    status = fail("stats");
  }
  if (status == 0) {
    printf("session=%016llx phase=%d readings=%u sent=%llu acks=%llu superseded=%llu "
           "rate_hz=%.1f rtt_ms=%.3f\n",
           (unsigned long long)stats.session, stats.phase, reading,
           (unsigned long long)stats.sent, (unsigned long long)stats.acks,
           (unsigned long long)stats.superseded, stats.rate_hz, stats.rtt_s * 1e3);
    if (stats.acks == 0) {
      fprintf(stderr, "push_source: no ACK from %s\n", monitor);
      status = 1;
    }
  }
  acp_source_free(source);
  return status;
}
