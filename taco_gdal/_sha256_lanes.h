/* SHA-256 of several independent messages at once, with the x86 SHA extensions.
 *
 * One message's 64 rounds are a chain of 32 SHA256RNDS2 instructions, each
 * waiting for the last: about 4 cycles apiece on Zen 3, which accepts one
 * per cycle.  A single message therefore leaves the unit idle three cycles in
 * four (OpenSSL: 1.4-1.5 GB/s on this machine's CPU).  Here up to LANES_MAX
 * messages advance together, a 64-byte block of each per step, so their
 * chains interleave: 2.7 GB/s with two lanes, 2.9 with three (16 KiB
 * members, one thread).
 *
 * The state of a lane is kept as the instructions want it: s0 = (A, B, E, F)
 * and s1 = (C, D, G, H), from the highest 32-bit element to the lowest.  Two
 * rounds turn the old (A, B, E, F) into the new (C, D, G, H), so the two
 * registers swap roles at each SHA256RNDS2.
 *
 * sha256_lanes() digests ``count`` messages, keeping up to ``width`` lanes
 * busy: when a message ends, the next one takes its lane.  Each message's
 * last one or two blocks (the padding and the bit length) are built in the
 * lane.  sha256_lanes_blocks() is the streaming form: it advances running
 * states over whole blocks (the caller keeps each message's partial block and
 * pads it with sha256_lanes_final()).  Callers check sha256_lanes_supported()
 * first.
 */
#ifndef TACO_SHA256_LANES_H
#define TACO_SHA256_LANES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LANES_MAX 3

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

#define LANES_TARGET __attribute__((target("sha,ssse3,sse4.1")))

static const uint32_t lanes_k[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

/* SHA-NI, SSSE3 (byte shuffle) and SSE4.1 (blend), asked of the CPU itself. */
static int sha256_lanes_supported(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1)) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & (1u << 29)) != 0; /* CPUID.(EAX=7,ECX=0):EBX.SHA[bit 29] */
}

/* True where the CPU and the OS use AVX: a thread that ran AVX code (ISA-L's
 * CRC on the writing thread) may have left the upper halves of the vector
 * registers dirty, and every legacy-SSE instruction after it (SHA-NI has no VEX
 * form) then pays for it until a VZEROUPPER. */
static int lanes_avx_present(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_AVX) && (c & bit_OSXSAVE);
}

static inline void lanes_clean_upper(int avx) {
    if (avx) __asm__ volatile("vzeroupper" ::: "memory");
}

/* Four rounds of lane l from w = W[t..t+3]. */
#define LANES_ROUNDS4(l, w, t)                                                                \
    do {                                                                                      \
        __m128i wk_ = _mm_add_epi32(w[l], _mm_load_si128((const __m128i *)&lanes_k[t]));      \
        s1[l] = _mm_sha256rnds2_epu32(s1[l], s0[l], wk_);                                     \
        s0[l] = _mm_sha256rnds2_epu32(s0[l], s1[l], _mm_shuffle_epi32(wk_, 0x0E));            \
    } while (0)
/* a = W[t+16..t+19], from a = W[t..], b = W[t+4..], c = W[t+8..], d = W[t+12..]:
 * W[i] = s1(W[i-2]) + W[i-7] + s0(W[i-15]) + W[i-16]. */
#define LANES_SCHEDULE(l, a, b, c, d)                                                         \
    (a[l] = _mm_sha256msg2_epu32(                                                             \
         _mm_add_epi32(_mm_sha256msg1_epu32(a[l], b[l]), _mm_alignr_epi8(d[l], c[l], 4)), d[l]))
#define LANES_EACH(statement) _Pragma("GCC unroll 4") for (int l = 0; l < L; l++) statement

/* One 64-byte block of each of LN lanes.  Each step is written for every lane
 * before the next step, so the compiler sees LN independent chains. */
#define LANES_COMPRESS(NAME, LN)                                                              \
    static inline __attribute__((always_inline)) LANES_TARGET void NAME(                      \
        __m128i *s0, __m128i *s1, const uint8_t *const *block) {                              \
        enum { L = LN };                                                                      \
        const __m128i big_endian =                                                            \
            _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);                     \
        __m128i was0[L], was1[L], w0[L], w1[L], w2[L], w3[L];                                 \
        LANES_EACH({                                                                          \
            const __m128i *p_ = (const __m128i *)block[l];                                    \
            was0[l] = s0[l];                                                                  \
            was1[l] = s1[l];                                                                  \
            w0[l] = _mm_shuffle_epi8(_mm_loadu_si128(p_), big_endian);                        \
            w1[l] = _mm_shuffle_epi8(_mm_loadu_si128(p_ + 1), big_endian);                    \
            w2[l] = _mm_shuffle_epi8(_mm_loadu_si128(p_ + 2), big_endian);                    \
            w3[l] = _mm_shuffle_epi8(_mm_loadu_si128(p_ + 3), big_endian);                    \
        });                                                                                   \
        LANES_EACH(LANES_ROUNDS4(l, w0, 0));                                                  \
        LANES_EACH(LANES_ROUNDS4(l, w1, 4));                                                  \
        LANES_EACH(LANES_ROUNDS4(l, w2, 8));                                                  \
        LANES_EACH(LANES_ROUNDS4(l, w3, 12));                                                 \
        for (int t = 16; t < 64; t += 16) {                                                   \
            LANES_EACH({ LANES_SCHEDULE(l, w0, w1, w2, w3); LANES_ROUNDS4(l, w0, t); });      \
            LANES_EACH({ LANES_SCHEDULE(l, w1, w2, w3, w0); LANES_ROUNDS4(l, w1, t + 4); });  \
            LANES_EACH({ LANES_SCHEDULE(l, w2, w3, w0, w1); LANES_ROUNDS4(l, w2, t + 8); });  \
            LANES_EACH({ LANES_SCHEDULE(l, w3, w0, w1, w2); LANES_ROUNDS4(l, w3, t + 12); }); \
        }                                                                                     \
        LANES_EACH({                                                                          \
            s0[l] = _mm_add_epi32(s0[l], was0[l]);                                            \
            s1[l] = _mm_add_epi32(s1[l], was1[l]);                                            \
        });                                                                                   \
    }
LANES_COMPRESS(lanes_compress1, 1)
LANES_COMPRESS(lanes_compress2, 2)
LANES_COMPRESS(lanes_compress3, 3)

/* One block of each of ``busy`` (1..3) lanes. */
static inline __attribute__((always_inline)) LANES_TARGET void lanes_compress(
    int busy, __m128i *s0, __m128i *s1, const uint8_t *const *block) {
    if (busy == 3)
        lanes_compress3(s0, s1, block);
    else if (busy == 2)
        lanes_compress2(s0, s1, block);
    else
        lanes_compress1(s0, s1, block);
}

typedef struct {
    const uint8_t *next;  /* the message's next whole block */
    size_t blocks;        /* whole blocks of the message not digested yet */
    uint8_t tail[128];    /* its last bytes, the 0x80, zeros and the bit length */
    int tail_blocks;      /* 1 or 2 */
    int tail_used;
    size_t message;
} LanesLane;

/* The last one or two blocks of a message of ``length`` bytes, into ``tail``: its
 * last length % 64 bytes (``rest``), the 0x80, zeros and the bit length; how many. */
static int lanes_padding(uint8_t tail[128], const uint8_t *rest, uint64_t length) {
    size_t used = (size_t)(length & 63);
    int blocks = used + 9 <= 64 ? 1 : 2;
    uint64_t bits = length << 3;
    memset(tail, 0, 128);
    if (used) memcpy(tail, rest, used);
    tail[used] = 0x80;
    for (int i = 0; i < 8; i++) tail[64 * blocks - 1 - i] = (uint8_t)(bits >> (8 * i));
    return blocks;
}

static void lanes_start(LanesLane *lane, const uint8_t *data, size_t size, size_t message) {
    size_t whole = size >> 6;
    lane->next = data;
    lane->blocks = whole;
    lane->message = message;
    lane->tail_used = 0;
    lane->tail_blocks = lanes_padding(lane->tail, data + (whole << 6), size);
}

static inline size_t lanes_left(const LanesLane *lane) {
    return lane->blocks + (size_t)(lane->tail_blocks - lane->tail_used);
}

static inline const uint8_t *lanes_block(LanesLane *lane) {
    if (lane->blocks) {
        const uint8_t *block = lane->next;
        lane->next += 64;
        lane->blocks--;
        return block;
    }
    return lane->tail + 64 * lane->tail_used++;
}

LANES_TARGET static void lanes_finish(__m128i s0, __m128i s1, uint8_t *digest) {
    uint32_t abef[4], cdgh[4];
    _mm_storeu_si128((__m128i *)abef, s0);
    _mm_storeu_si128((__m128i *)cdgh, s1);
    const uint32_t h[8] = {abef[3], abef[2], cdgh[3], cdgh[2], abef[1], abef[0], cdgh[1], cdgh[0]};
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(h[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(h[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(h[i] >> 8);
        digest[4 * i + 3] = (uint8_t)h[i];
    }
}

/* The initial state, as (s0, s1) = (ABEF, CDGH). */
LANES_TARGET static void sha256_lanes_init(__m128i *s0, __m128i *s1) {
    *s0 = _mm_set_epi32(0x6a09e667, (int)0xbb67ae85, 0x510e527f, (int)0x9b05688c);
    *s1 = _mm_set_epi32(0x3c6ef372, (int)0xa54ff53a, 0x1f83d9ab, 0x5be0cd19);
}

/* The SHA-256 of data[i] (size[i] bytes) into digest + 32 * i, for i < count,
 * with up to ``width`` (1..LANES_MAX) messages in flight. */
LANES_TARGET static void sha256_lanes(const uint8_t *const *data, const size_t *size,
                                      size_t count, uint8_t *digest, int width) {
    LanesLane lane[LANES_MAX];
    __m128i s0[LANES_MAX], s1[LANES_MAX];
    const uint8_t *block[LANES_MAX];
    int busy = 0;
    size_t started = 0;
    if (width < 1) width = 1;
    if (width > LANES_MAX) width = LANES_MAX;
    for (;;) {
        for (; busy < width && started < count; busy++, started++) {
            lanes_start(&lane[busy], data[started], size[started], started);
            sha256_lanes_init(&s0[busy], &s1[busy]);
        }
        if (busy == 0) return;
        size_t steps = lanes_left(&lane[0]);
        for (int i = 1; i < busy; i++)
            if (lanes_left(&lane[i]) < steps) steps = lanes_left(&lane[i]);
        for (size_t step = 0; step < steps; step++) {
            for (int i = 0; i < busy; i++) block[i] = lanes_block(&lane[i]);
            lanes_compress(busy, s0, s1, block);
        }
        for (int i = 0; i < busy;) { /* finished lanes: the last busy one moves in */
            if (lanes_left(&lane[i])) {
                i++;
                continue;
            }
            lanes_finish(s0[i], s1[i], digest + 32 * lane[i].message);
            busy--;
            lane[i] = lane[busy];
            s0[i] = s0[busy];
            s1[i] = s1[busy];
        }
    }
}

/* Advances ``count`` (1..LANES_MAX) running digests over whole 64-byte blocks:
 * digest i, whose state is (s0[i], s1[i]), over blocks[i] blocks from data[i].
 * While two or more have blocks left their chains interleave; blocks[] and
 * data[] are consumed.  The streaming form of sha256_lanes() (Sha256Stream). */
LANES_TARGET static void sha256_lanes_blocks(__m128i *s0, __m128i *s1, const uint8_t **data,
                                             size_t *blocks, int count) {
    for (;;) {
        int active[LANES_MAX], busy = 0;
        for (int i = 0; i < count; i++)
            if (blocks[i]) active[busy++] = i;
        if (busy == 0) return;
        __m128i a0[LANES_MAX], a1[LANES_MAX];
        const uint8_t *block[LANES_MAX];
        size_t steps = blocks[active[0]];
        for (int j = 0; j < busy; j++) {
            a0[j] = s0[active[j]];
            a1[j] = s1[active[j]];
            if (blocks[active[j]] < steps) steps = blocks[active[j]];
        }
        for (size_t step = 0; step < steps; step++) {
            for (int j = 0; j < busy; j++) block[j] = data[active[j]] + 64 * step;
            lanes_compress(busy, a0, a1, block);
        }
        for (int j = 0; j < busy; j++) {
            s0[active[j]] = a0[j];
            s1[active[j]] = a1[j];
            data[active[j]] += 64 * steps;
            blocks[active[j]] -= steps;
        }
    }
}

/* The digest of a message of ``length`` bytes whose whole blocks are in (s0, s1)
 * and whose last length % 64 bytes are ``rest``: pads, compresses, writes 32 bytes. */
LANES_TARGET static void sha256_lanes_final(__m128i s0, __m128i s1, const uint8_t *rest,
                                            uint64_t length, uint8_t *digest) {
    uint8_t tail[128];
    size_t blocks = (size_t)lanes_padding(tail, rest, length);
    const uint8_t *data = tail;
    sha256_lanes_blocks(&s0, &s1, &data, &blocks, 1);
    lanes_finish(s0, s1, digest);
}

#else /* not x86: callers use OpenSSL */
static int sha256_lanes_supported(void) { return 0; }
static void sha256_lanes(const uint8_t *const *data, const size_t *size, size_t count,
                         uint8_t *digest, int width) {
    (void)data, (void)size, (void)count, (void)digest, (void)width;
}
typedef struct { uint32_t unused[4]; } __m128i; /* never used: Sha256Stream takes OpenSSL */
static void sha256_lanes_blocks(__m128i *s0, __m128i *s1, const uint8_t **data, size_t *blocks,
                                int count) {
    (void)s0, (void)s1, (void)data, (void)blocks, (void)count;
}
static void sha256_lanes_init(__m128i *s0, __m128i *s1) { (void)s0, (void)s1; }
static int lanes_avx_present(void) { return 0; }
static inline void lanes_clean_upper(int avx) { (void)avx; }
static void sha256_lanes_final(__m128i s0, __m128i s1, const uint8_t *rest, uint64_t length,
                               uint8_t *digest) {
    (void)s0, (void)s1, (void)rest, (void)length, (void)digest;
}
#endif

#endif
