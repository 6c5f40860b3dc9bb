/* Does work on the other vCPU slow a memcpy on this one?  (CHANGELOG, twenty-third session)
 *
 *   gcc -O2 -o /tmp/core_interference bench/core_interference.c -lpthread
 *   /tmp/core_interference        # 256 KiB memcpy: stays in this core's cache
 *   /tmp/core_interference big    # 64 MiB memcpy: through memory
 *
 * The main thread, on CPU 0, times memcpy rounds while a thread on CPU 1 sleeps, runs
 * SHA-NI rounds, multiplies integers, or streams through 64 MiB of memory; the four are
 * interleaved for 40 rounds, and the best and mean time of each is printed.
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile int mode = 0, stop = 0;
static const char *names[] = {"idle", "sha-ni", "int-mul", "mem-read"};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((target("sha,sse4.1"))) static void *other(void *arg) {
    (void)arg;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(1, &cpus);
    pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus);
    __m128i x = _mm_set1_epi32(1), y = _mm_set1_epi32(2), k = _mm_set1_epi32(3);
    uint64_t z = 1, sum = 0;
    size_t big = (size_t)64 << 20;
    char *memory = malloc(big);
    memset(memory, 1, big);
    while (!stop) {
        if (mode == 0) {
            struct timespec pause = {0, 200000};
            nanosleep(&pause, NULL);
        } else if (mode == 1) {
            for (int i = 0; i < 100000; i++) {
                x = _mm_sha256rnds2_epu32(x, y, k);
                y = _mm_sha256rnds2_epu32(y, x, k);
            }
        } else if (mode == 2) {
            for (int i = 0; i < 100000; i++) z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        } else {
            for (size_t i = 0; i < big; i += 64) sum += (uint64_t)memory[i];
        }
    }
    printf("(%d %llu %llu)\n", _mm_cvtsi128_si32(x), (unsigned long long)z, (unsigned long long)sum);
    free(memory);
    return NULL;
}

int main(int argc, char **argv) {
    int through_memory = argc > 1;
    size_t n = through_memory ? (size_t)64 << 20 : (size_t)256 << 10;
    int reps = through_memory ? 4 : 2000;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(0, &cpus);
    sched_setaffinity(0, sizeof cpus, &cpus);
    char *a = aligned_alloc(4096, n), *b = aligned_alloc(4096, n);
    memset(a, 1, n);
    memset(b, 2, n);
    pthread_t thread;
    pthread_create(&thread, NULL, other, NULL);
    double best[4] = {1e9, 1e9, 1e9, 1e9}, sum[4] = {0};
    for (int round = 0; round < 40; round++) {
        for (int m = 0; m < 4; m++) {
            mode = m;
            struct timespec settle = {0, 20000000};
            nanosleep(&settle, NULL);
            double started = now();
            for (int r = 0; r < reps; r++) {
                memcpy(b, a, n);
                a[r & 1023]++;
            }
            double t = (now() - started) / reps;
            if (t < best[m]) best[m] = t;
            sum[m] += t;
        }
    }
    stop = 1;
    pthread_join(thread, NULL);
    for (int m = 0; m < 4; m++)
        printf("%-8s best %.2f us mean %.2f us (%.1f GB/s best)\n", names[m], best[m] * 1e6,
               sum[m] / 40 * 1e6, n / best[m] / 1e9);
    free(a);
    free(b);
    return 0;
}
