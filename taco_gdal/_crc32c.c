/* CRC-32C (Castagnoli) and the ZIP CRC-32 by carry-less multiplication, for x86-64 CPUs
 * with VPCLMULQDQ.
 *
 * The SSE 4.2 crc32 instruction used by google-crc32c, ISA-L's AVX2 code and
 * the crc32c package retires 8 bytes a cycle at best (about 24 GB/s on the
 * AMD EPYC this project is measured on).  Folding 128-byte blocks with
 * 256-bit carry-less multiplies runs on other execution units and is not
 * bound by that instruction's throughput.
 *
 * How it works: a block C of 16 bytes followed by d more bytes stands, for the
 * CRC, for C * x^(8d) mod P.  With d = 128 bytes that product is
 * C.lo * K1 xor C.hi * K2 (two 64 x 33-bit carry-less products), where
 * K1 = reflect(x^(1024+32) mod P) << 1 and K2 = reflect(x^(1024-32) mod P) << 1,
 * and it is xored into the 16 bytes 128 bytes later.  Eight such lanes (four
 * 256-bit registers) walk the input 128 bytes at a time; the 128 bytes they
 * hold at the end have the same CRC, continued by the input's tail, as the
 * input itself, so both are finished with the crc32 instruction: no Barrett
 * reduction, and the constants are computed here from P at import.
 *
 * The ZIP CRC-32 (gzip polynomial) folds the same way with its own constants;
 * it has no instruction, so the 128 bytes left are finished by table.  ISA-L's
 * AVX2 code ran it at 9.9 GB/s on this machine's CPU; folding alone runs at
 * about 25.  The blocks of both() fold the ZIP CRC-32 over
 * 32 KiB while the crc32 instruction takes the CRC-32C along four stripes of
 * it, so a copy that needs both reads its buffer once and the two run on
 * different execution units.  With AVX-512 (both_blocks_wide) the ZIP CRC-32 and
 * one of the four stripes are folded in 512-bit registers and the crc32
 * instruction takes the other three: 8.9 us per 256 KiB against 11.1 for the
 * 256-bit blocks on the Zen 4 EPYC of the twenty-third session, where ISA-L's
 * ZIP CRC-32 alone takes 4.7.
 *
 * Python API (module ``taco_gdal._crc32c``):
 *   accelerated: True when this CPU runs the folding code (else nothing uses it).
 *   value(buffer) -> int: CRC-32C of a buffer (GIL kept: small buffers).
 *   extend_hold(crc, pointer, n) / extend_release(crc, pointer, n) -> int:
 *     CRC-32C of n bytes at pointer (an address as int, or a bytes object),
 *     continuing the finished CRC ``crc``; the second releases the GIL.
 *   crc32(data, value=0) -> int: the ZIP CRC-32 of a buffer, as zlib.crc32.
 *   both(zip_crc, crc32c, pointer, n) -> (zip_crc, crc32c): both CRCs of n bytes
 *     at an address, continuing the finished CRCs given.
 *   both_256(...): the same with the 256-bit blocks on any CPU (for tests).
 *   wide: True when both() runs the 512-bit blocks.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TACO_X86 1
#endif

#define CRC32C_POLY 0x1EDC6F41u       /* x^32 implied, normal (MSB-first) form */
#define CRC32C_REFLECTED 0x82F63B78u  /* the same, reflected */
#define ZIP_POLY 0x04C11DB7u          /* the ZIP (gzip) CRC-32 */
#define ZIP_REFLECTED 0xEDB88320u
#define FOLD_MIN 512                  /* shorter inputs: the crc32 instruction alone */

/* A mixed block of m loop turns: 128 m bytes folded, then three stripes of 40 m bytes
 * for the crc32 instruction.  Large inputs take blocks of 256 turns (62 KiB), what is
 * left blocks of 32 turns (7.75 KiB): combining costs about 100 cycles a block. */
#define BIG_M 256
#define SMALL_M 32
#define BLOCK(m) (248 * (size_t)(m))

/* Both CRCs at once (crc32_and_crc32c): blocks of 32 KiB, the ZIP CRC-32 folded over
 * all of it while the crc32 instruction takes CRC-32C along four stripes of 8 KiB. */
#define BOTH_STRIPE 8192u
#define BOTH_BLOCK (4u * BOTH_STRIPE)

static int have_fold = 0;
static int have_wide = 0; /* and AVX-512F: both() runs both_blocks_wide */
static uint64_t fold_k1, fold_k2, zip_k1, zip_k2;
static uint32_t big_k[3], small_k[3]; /* move a CRC past 1, 2 and 3 stripes of a block */
static uint32_t both_k[3];            /* the same for the stripes of a fused block */

/* a * b mod P, normal form (Horner over b's bits, reducing at each step). */
static uint32_t mulmod(uint32_t a, uint32_t b, uint32_t poly) {
    uint32_t r = 0;
    for (int i = 31; i >= 0; i--) {
        uint32_t carry = r & 0x80000000u;
        r <<= 1;
        if (carry) r ^= poly;
        if ((b >> i) & 1u) r ^= a;
    }
    return r;
}

/* x^n mod P, normal form, by squaring: a few hundred steps where one step per power
 * took 0.86 ms at import for the block constants (n up to 245,727). */
static uint32_t xpow_mod(unsigned n, uint32_t poly) {
    uint32_t result = 1, power = 2; /* 1 and x */
    for (; n; n >>= 1, power = mulmod(power, power, poly))
        if (n & 1u) result = mulmod(result, power, poly);
    return result;
}

static uint32_t reflect32(uint32_t v) {
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) {
        r = (r << 1) | (v & 1u);
        v >>= 1;
    }
    return r;
}

static uint64_t fold_constant(unsigned bits, uint32_t poly) {
    return (uint64_t)reflect32(xpow_mod(bits, poly)) << 1;
}

/* The ZIP CRC-32 (gzip polynomial), reflected, a byte at a time by table: the ends of
 * what the folding code leaves, and CPUs without it. */
static uint32_t zip_table[256];

static void zip_table_init(void) {
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t s = b;
        for (int i = 0; i < 8; i++) s = (s >> 1) ^ (ZIP_REFLECTED & (0u - (s & 1u)));
        zip_table[b] = s;
    }
}

static uint32_t zip_bytewise(uint32_t s, const uint8_t *p, size_t n) {
    while (n--) s = zip_table[(s ^ *p++) & 0xFFu] ^ (s >> 8);
    return s;
}

/* Raw (no inversion) reflected CRC-32C update, one bit at a time: other CPUs. */
static uint32_t crc_bitwise(uint32_t s, const uint8_t *p, size_t n) {
    while (n--) {
        s ^= *p++;
        for (int i = 0; i < 8; i++) s = (s >> 1) ^ (CRC32C_REFLECTED & (0u - (s & 1u)));
    }
    return s;
}

#ifdef TACO_X86
__attribute__((target("sse4.2"))) static uint32_t crc_instruction(uint32_t s, const uint8_t *p,
                                                                   size_t n) {
    uint64_t s64 = s;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        s64 = _mm_crc32_u64(s64, v);
        p += 8;
        n -= 8;
    }
    s = (uint32_t)s64;
    while (n--) s = _mm_crc32_u8(s, *p++);
    return s;
}

__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq"))) static inline __m256i fold(
    __m256i lanes, __m256i k, const uint8_t *next) {
    __m256i lo = _mm256_clmulepi64_epi128(lanes, k, 0x00);
    __m256i hi = _mm256_clmulepi64_epi128(lanes, k, 0x11);
    __m256i data = _mm256_loadu_si256((const __m256i *)next);
    return _mm256_xor_si256(_mm256_xor_si256(lo, hi), data);
}

/* Four 256-bit registers: eight lanes of 16 bytes walking the input 128 bytes a turn. */
typedef struct {
    __m256i a[4];
} Lanes;

/* The lanes on the first 128 bytes at p, the raw CRC state s xored into the first four. */
__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq"))) static inline __attribute__((always_inline)) Lanes lanes_start(
    uint32_t s, const uint8_t *p) {
    Lanes l;
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) l.a[i] = _mm256_loadu_si256((const __m256i *)(p + 32 * i));
    l.a[0] = _mm256_xor_si256(l.a[0], _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, (int)s));
    return l;
}

/* The folding constants of one polynomial, in every 128-bit half of a register. */
__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq"))) static inline __attribute__((always_inline)) __m256i fold_k(
    uint64_t k1, uint64_t k2) {
    return _mm256_set_epi64x((long long)k2, (long long)k1, (long long)k2, (long long)k1);
}

/* The lanes moved past the 128 bytes at p. */
__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq"))) static inline __attribute__((always_inline)) void lanes_fold(
    Lanes *l, const uint8_t *p, __m256i k) {
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) l->a[i] = fold(l->a[i], k, p + 32 * i);
}

/* The 128 bytes the lanes hold. */
__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq"))) static inline __attribute__((always_inline)) void lanes_store(
    const Lanes *l, uint8_t *held) {
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) _mm256_storeu_si256((__m256i *)(held + 32 * i), l->a[i]);
}

/* The raw CRC of the 128 bytes the lanes hold: that of everything they walked. */
__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq"))) static inline __attribute__((always_inline)) uint32_t lanes_crc(
    const Lanes *l) {
    uint8_t held[128];
    lanes_store(l, held);
    return crc_instruction(0, held, sizeof held);
}

/* Raw update of n >= 256 bytes. */
__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq"))) static uint32_t crc_fold(
    uint32_t s, const uint8_t *p, size_t n) {
    const __m256i k = fold_k(fold_k1, fold_k2);
    Lanes l = lanes_start(s, p);
    for (p += 128, n -= 128; n >= 128; p += 128, n -= 128) lanes_fold(&l, p, k);
    return crc_instruction(lanes_crc(&l), p, n);
}

/* Raw ZIP CRC-32 update of n >= 256 bytes: folded, the 128 bytes held and the rest by table. */
__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq"))) static uint32_t zip_fold(
    uint32_t s, const uint8_t *p, size_t n) {
    const __m256i k = fold_k(zip_k1, zip_k2);
    Lanes l = lanes_start(s, p);
    for (p += 128, n -= 128; n >= 128; p += 128, n -= 128) lanes_fold(&l, p, k);
    uint8_t held[128];
    lanes_store(&l, held);
    return zip_bytewise(zip_bytewise(0, held, sizeof held), p, n);
}
#endif

#ifdef TACO_X86
/* c * x^(8L) mod P for the L whose constant is k = reflect(x^(8L-33) mod P): the 63-bit
 * carry-less product, read as 8 message bytes by the crc32 instruction, is c * k * x^33. */
__attribute__((target("sse4.2,pclmul"))) static inline uint32_t shift(uint32_t c, uint32_t k) {
    __m128i product = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)c), _mm_cvtsi32_si128((int)k),
                                           0x00);
    return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(product));
}

/* GCC reads a loop's constant register from the stack at every use (a second load per
 * carry-less multiply: both_blocks_wide took 12.4 us per 256 KiB instead of 8.0); an empty
 * asm that may change the value keeps it in a register. */
#define KEEP_IN_REGISTER(v) __asm__("" : "+v"(v))

#define CRC_STEP(c, q)                     \
    do {                                   \
        uint64_t v_;                       \
        memcpy(&v_, (q), 8);               \
        (c) = _mm_crc32_u64((c), v_);      \
        (q) += 8;                          \
    } while (0)
#define CRC_40(c, q) \
    do {             \
        CRC_STEP(c, q); CRC_STEP(c, q); CRC_STEP(c, q); CRC_STEP(c, q); CRC_STEP(c, q); \
    } while (0)

/* Raw update of one block of m turns: its first 128 m bytes folded, its three stripes of
 * 40 m bytes through the crc32 instruction in the same loop (other execution units:
 * both run at once), then the four CRCs combined. */
__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq"))) static uint32_t crc_block(
    uint32_t s, const uint8_t *p, int m, const uint32_t *shift_k) {
    const uint8_t *f = p + 128, *q1 = p + 128 * (size_t)m, *q2 = q1 + 40 * (size_t)m,
                  *q3 = q2 + 40 * (size_t)m;
    const __m256i k = fold_k(fold_k1, fold_k2);
    Lanes l = lanes_start(s, p);
    uint64_t c1 = 0, c2 = 0, c3 = 0;
    CRC_40(c1, q1);
    CRC_40(c2, q2);
    CRC_40(c3, q3);
    for (int i = 1; i < m; i++, f += 128) {
        lanes_fold(&l, f, k);
        CRC_40(c1, q1);
        CRC_40(c2, q2);
        CRC_40(c3, q3);
    }
    return shift(lanes_crc(&l), shift_k[2]) ^ shift((uint32_t)c1, shift_k[1]) ^
           shift((uint32_t)c2, shift_k[0]) ^ (uint32_t)c3;
}
#endif

/* Raw CRC-32C update (the state is the finished CRC inverted). */
static uint32_t crc32c_raw(uint32_t s, const uint8_t *p, size_t n) {
#ifdef TACO_X86
    if (have_fold) {
        for (; n >= BLOCK(BIG_M); p += BLOCK(BIG_M), n -= BLOCK(BIG_M))
            s = crc_block(s, p, BIG_M, big_k);
        for (; n >= BLOCK(SMALL_M); p += BLOCK(SMALL_M), n -= BLOCK(SMALL_M))
            s = crc_block(s, p, SMALL_M, small_k);
        return n >= FOLD_MIN ? crc_fold(s, p, n) : crc_instruction(s, p, n);
    }
#endif
    return crc_bitwise(s, p, n);
}

/* CRC-32C of n bytes continuing the finished CRC `crc` (google-crc32c's crc32c_extend). */
static uint32_t crc32c_extend(uint32_t crc, const uint8_t *p, size_t n) {
    return ~crc32c_raw(~crc, p, n);
}

/* Raw ZIP CRC-32 update. */
static uint32_t zip_raw(uint32_t s, const uint8_t *p, size_t n) {
#ifdef TACO_X86
    if (have_fold && n >= FOLD_MIN) return zip_fold(s, p, n);
#endif
    return zip_bytewise(s, p, n);
}

#ifdef TACO_X86
/* Both raw CRCs of whole fused blocks: the ZIP CRC-32 folded (carry-less multiplies)
 * while the crc32 instruction takes CRC-32C along the block's four stripes (another
 * execution unit), each 128-byte turn reading 128 bytes for one and 4 x 32 for the other. */
__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq"))) static void both_blocks(
    uint32_t *zip, uint32_t *castagnoli, const uint8_t *p, size_t blocks) {
    const __m256i k = fold_k(zip_k1, zip_k2);
    Lanes l = lanes_start(*zip, p);
    uint32_t s = *castagnoli;
    for (size_t b = 0; b < blocks; b++) {
        const uint8_t *block = p + b * BOTH_BLOCK, *q0 = block, *q1 = block + BOTH_STRIPE,
                      *q2 = q1 + BOTH_STRIPE, *q3 = q2 + BOTH_STRIPE;
        uint64_t c0 = s, c1 = 0, c2 = 0, c3 = 0;
        for (unsigned t = 0; t < BOTH_BLOCK / 128; t++) {
            if (b | t) lanes_fold(&l, block + 128 * t, k); /* the first 128: lanes_start */
            CRC_STEP(c0, q0); CRC_STEP(c1, q1); CRC_STEP(c2, q2); CRC_STEP(c3, q3);
            CRC_STEP(c0, q0); CRC_STEP(c1, q1); CRC_STEP(c2, q2); CRC_STEP(c3, q3);
            CRC_STEP(c0, q0); CRC_STEP(c1, q1); CRC_STEP(c2, q2); CRC_STEP(c3, q3);
            CRC_STEP(c0, q0); CRC_STEP(c1, q1); CRC_STEP(c2, q2); CRC_STEP(c3, q3);
        }
        s = shift((uint32_t)c0, both_k[2]) ^ shift((uint32_t)c1, both_k[1]) ^
            shift((uint32_t)c2, both_k[0]) ^ (uint32_t)c3;
    }
    uint8_t held[128];
    lanes_store(&l, held);
    *zip = zip_bytewise(0, held, sizeof held);
    *castagnoli = s;
}
#endif

#ifdef TACO_X86
/* both_blocks with 512-bit registers, for CPUs with AVX-512F and 512-bit VPCLMULQDQ.  The
 * 256-bit blocks above are bound by the crc32 instruction (all 32 KiB of CRC-32C go through
 * it, 8 bytes a cycle): 11.3 us per 256 KiB on the AMD EPYC (Zen 4) of the twenty-third
 * session, where ISA-L's AVX-512 ZIP CRC-32 alone takes 4.7.  Here each 256-byte turn folds
 * the ZIP CRC-32 over its 256 bytes in four 512-bit registers (distance 256 bytes) and the
 * CRC-32C's first stripe over 64 bytes in a fifth (distance 64 bytes), while the crc32
 * instruction takes 64 bytes of each of the three other stripes: about as much work for the
 * vector units as for the crc32 instruction.  The stripes are combined as in both_blocks. */
#define WIDE_TARGET "sse4.2,pclmul,avx2,vpclmulqdq,avx512f"
static uint64_t zip_wide_k1, zip_wide_k2, stripe_k1, stripe_k2;

__attribute__((target(WIDE_TARGET))) static inline __attribute__((always_inline)) __m512i fold_wide(
    __m512i lanes, __m512i k, const uint8_t *next) {
    __m512i lo = _mm512_clmulepi64_epi128(lanes, k, 0x00);
    __m512i hi = _mm512_clmulepi64_epi128(lanes, k, 0x11);
    return _mm512_ternarylogic_epi64(lo, hi, _mm512_loadu_si512((const void *)next), 0x96);
}

/* 64 bytes at p, the raw CRC state s xored into their first four. */
__attribute__((target(WIDE_TARGET))) static inline __attribute__((always_inline)) __m512i start_wide(
    uint32_t s, const uint8_t *p) {
    return _mm512_xor_si512(_mm512_loadu_si512((const void *)p),
                            _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)s)));
}

__attribute__((target(WIDE_TARGET))) static inline __attribute__((always_inline)) __m512i k_wide(
    uint64_t k1, uint64_t k2) {
    return _mm512_set_epi64((long long)k2, (long long)k1, (long long)k2, (long long)k1,
                            (long long)k2, (long long)k1, (long long)k2, (long long)k1);
}

/* 64 bytes of each of the three stripes through the crc32 instruction. */
#define STRIPES_64(c1, q1, c2, q2, c3, q3)                                      \
    do {                                                                        \
        _Pragma("GCC unroll 8") for (int i_ = 0; i_ < 8; i_++) {                \
            CRC_STEP(c1, q1); CRC_STEP(c2, q2); CRC_STEP(c3, q3);               \
        }                                                                       \
    } while (0)

__attribute__((target(WIDE_TARGET))) static void both_blocks_wide(
    uint32_t *zip, uint32_t *castagnoli, const uint8_t *p, size_t blocks) {
    __m512i kz = k_wide(zip_wide_k1, zip_wide_k2), kc = k_wide(stripe_k1, stripe_k2);
    __m512i z0 = start_wide(*zip, p), z1 = _mm512_loadu_si512((const void *)(p + 64)),
            z2 = _mm512_loadu_si512((const void *)(p + 128)),
            z3 = _mm512_loadu_si512((const void *)(p + 192));
    uint32_t s = *castagnoli;
    for (size_t b = 0; b < blocks; b++) {
        const uint8_t *block = p + b * BOTH_BLOCK, *q1 = block + BOTH_STRIPE,
                      *q2 = q1 + BOTH_STRIPE, *q3 = q2 + BOTH_STRIPE;
        if (b) { /* the first block's first 256 bytes: the registers' start */
            z0 = fold_wide(z0, kz, block);
            z1 = fold_wide(z1, kz, block + 64);
            z2 = fold_wide(z2, kz, block + 128);
            z3 = fold_wide(z3, kz, block + 192);
        }
        __m512i c0 = start_wide(s, block);
        uint64_t c1 = 0, c2 = 0, c3 = 0;
        STRIPES_64(c1, q1, c2, q2, c3, q3);
        for (unsigned t = 1; t < BOTH_BLOCK / 256; t++) {
            const uint8_t *turn = block + 256 * t;
            KEEP_IN_REGISTER(kz);
            KEEP_IN_REGISTER(kc);
            z0 = fold_wide(z0, kz, turn);
            z1 = fold_wide(z1, kz, turn + 64);
            z2 = fold_wide(z2, kz, turn + 128);
            z3 = fold_wide(z3, kz, turn + 192);
            c0 = fold_wide(c0, kc, block + 64 * t);
            STRIPES_64(c1, q1, c2, q2, c3, q3);
        }
        uint8_t first[64];
        _mm512_storeu_si512((void *)first, c0);
        s = shift(crc_instruction(0, first, sizeof first), both_k[2]) ^
            shift((uint32_t)c1, both_k[1]) ^ shift((uint32_t)c2, both_k[0]) ^ (uint32_t)c3;
    }
    uint8_t held[256];
    _mm512_storeu_si512((void *)held, z0);
    _mm512_storeu_si512((void *)(held + 64), z1);
    _mm512_storeu_si512((void *)(held + 128), z2);
    _mm512_storeu_si512((void *)(held + 192), z3);
    *zip = zip_bytewise(0, held, sizeof held);
    *castagnoli = s;
}
#endif

/* The ZIP CRC-32 and the CRC-32C of n bytes, continuing the finished CRCs given. */
static void both_extend(uint32_t *zip, uint32_t *castagnoli, const uint8_t *p, size_t n,
                        int wide) {
    uint32_t z = ~*zip, c = ~*castagnoli;
#ifdef TACO_X86
    size_t blocks = have_fold ? n / BOTH_BLOCK : 0;
    if (blocks) {
        if (wide && have_wide)
            both_blocks_wide(&z, &c, p, blocks);
        else
            both_blocks(&z, &c, p, blocks);
        p += blocks * BOTH_BLOCK;
        n -= blocks * BOTH_BLOCK;
    }
#else
    (void)wide;
#endif
    *zip = ~zip_raw(z, p, n);
    *castagnoli = ~crc32c_raw(c, p, n);
}

static PyObject *value(PyObject *module, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t crc = crc32c_extend(0, (const uint8_t *)view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(crc);
}

/* The n bytes a (pointer, n) pair of arguments names: an address as an int, or a bytes
 * object at least n long.  0 with an exception set when they name none. */
static int bytes_at(PyObject *pointer, PyObject *length, const uint8_t **p, Py_ssize_t *n) {
    *n = PyLong_AsSsize_t(length);
    if (*n == -1 && PyErr_Occurred()) return 0;
    if (*n < 0) {
        PyErr_Format(PyExc_ValueError, "expected a length >= 0, found %zd", *n);
        return 0;
    }
    if (PyBytes_Check(pointer)) {
        if (*n > PyBytes_GET_SIZE(pointer)) {
            PyErr_Format(PyExc_ValueError, "expected at most %zd bytes, found a length of %zd",
                         PyBytes_GET_SIZE(pointer), *n);
            return 0;
        }
        *p = (const uint8_t *)PyBytes_AS_STRING(pointer);
        return 1;
    }
    if (!PyLong_Check(pointer)) {
        PyErr_Format(PyExc_TypeError, "expected an address or bytes, found %.100s",
                     Py_TYPE(pointer)->tp_name);
        return 0;
    }
    *p = (const uint8_t *)PyLong_AsVoidPtr(pointer);
    if (*p == NULL && PyErr_Occurred()) return 0;
    if (*p == NULL && *n) {
        PyErr_SetString(PyExc_ValueError, "expected an address, found 0");
        return 0;
    }
    return 1;
}

static PyObject *extend(PyObject *const *args, Py_ssize_t nargs, int release) {
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "expected (crc, pointer, n), found %zd arguments", nargs);
        return NULL;
    }
    unsigned long crc = PyLong_AsUnsignedLong(args[0]);
    if (crc == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    const uint8_t *p;
    Py_ssize_t n;
    if (!bytes_at(args[1], args[2], &p, &n)) return NULL;
    uint32_t result;
    if (release) {
        Py_BEGIN_ALLOW_THREADS result = crc32c_extend((uint32_t)crc, p, (size_t)n);
        Py_END_ALLOW_THREADS
    } else {
        result = crc32c_extend((uint32_t)crc, p, (size_t)n);
    }
    return PyLong_FromUnsignedLong(result);
}

/* crc32(data, value=0) -> int: the ZIP CRC-32 of a buffer, as zlib.crc32. */
static PyObject *zip_crc32(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) {
        PyErr_Format(PyExc_TypeError, "expected (data, value=0), found %zd arguments", nargs);
        return NULL;
    }
    unsigned long crc = 0;
    if (nargs == 2) {
        crc = PyLong_AsUnsignedLongMask(args[1]);
        if (crc == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t s = ~(uint32_t)crc;
    if (view.len > (1 << 18)) {
        Py_BEGIN_ALLOW_THREADS s = zip_raw(s, (const uint8_t *)view.buf, (size_t)view.len);
        Py_END_ALLOW_THREADS
    } else {
        s = zip_raw(s, (const uint8_t *)view.buf, (size_t)view.len);
    }
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(~s);
}

/* both(zip_crc, crc32c, pointer, n) -> (zip_crc, crc32c): both CRCs of n bytes at an
 * address, continuing the finished CRCs given (GIL released above 256 KiB); with ``wide``
 * the 512-bit blocks where the CPU has them. */
static PyObject *both_with(PyObject *const *args, Py_ssize_t nargs, int wide) {
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "expected (zip_crc, crc32c, pointer, n), found %zd arguments",
                     nargs);
        return NULL;
    }
    unsigned long zip = PyLong_AsUnsignedLong(args[0]);
    if (zip == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    unsigned long castagnoli = PyLong_AsUnsignedLong(args[1]);
    if (castagnoli == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    if (zip > 0xFFFFFFFFul || castagnoli > 0xFFFFFFFFul) {
        PyErr_SetString(PyExc_ValueError, "expected CRCs of 32 bits");
        return NULL;
    }
    const uint8_t *p;
    Py_ssize_t n;
    if (!bytes_at(args[2], args[3], &p, &n)) return NULL;
    uint32_t z = (uint32_t)zip, c = (uint32_t)castagnoli;
    if (n > (1 << 18)) {
        Py_BEGIN_ALLOW_THREADS both_extend(&z, &c, p, (size_t)n, wide);
        Py_END_ALLOW_THREADS
    } else {
        both_extend(&z, &c, p, (size_t)n, wide);
    }
    return Py_BuildValue("(kk)", (unsigned long)z, (unsigned long)c);
}

static PyObject *both(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return both_with(args, nargs, 1);
}

/* both_256: the same with the 256-bit blocks on every CPU, so that tests check both kinds. */
static PyObject *both_256(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return both_with(args, nargs, 0);
}

static PyObject *extend_hold(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return extend(args, nargs, 0);
}

static PyObject *extend_release(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return extend(args, nargs, 1);
}

static PyMethodDef methods[] = {
    {"value", value, METH_O, "CRC-32C of a buffer, the GIL kept."},
    {"extend_hold", (PyCFunction)(void (*)(void))extend_hold, METH_FASTCALL,
     "extend_hold(crc, pointer, n): CRC-32C of n bytes at pointer continuing crc."},
    {"extend_release", (PyCFunction)(void (*)(void))extend_release, METH_FASTCALL,
     "extend_release(crc, pointer, n): the same, the GIL released."},
    {"crc32", (PyCFunction)(void (*)(void))zip_crc32, METH_FASTCALL,
     "crc32(data, value=0): the ZIP CRC-32 of a buffer, as zlib.crc32."},
    {"both", (PyCFunction)(void (*)(void))both, METH_FASTCALL,
     "both(zip_crc, crc32c, pointer, n) -> (zip_crc, crc32c): both CRCs of n bytes at pointer."},
    {"both_256", (PyCFunction)(void (*)(void))both_256, METH_FASTCALL,
     "both_256(zip_crc, crc32c, pointer, n): as both, with the 256-bit blocks on every CPU."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "_crc32c", "CRC-32C by carry-less multiplication (VPCLMULQDQ).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__crc32c(void) {
#ifdef TACO_X86
    __builtin_cpu_init();
    have_fold = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") &&
                __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq");
    have_wide = have_fold && __builtin_cpu_supports("avx512f");
#endif
    fold_k1 = fold_constant(1024 + 32, CRC32C_POLY);
    fold_k2 = fold_constant(1024 - 32, CRC32C_POLY);
    zip_k1 = fold_constant(1024 + 32, ZIP_POLY);
    zip_k2 = fold_constant(1024 - 32, ZIP_POLY);
#ifdef TACO_X86
    zip_wide_k1 = fold_constant(2048 + 32, ZIP_POLY);
    zip_wide_k2 = fold_constant(2048 - 32, ZIP_POLY);
    stripe_k1 = fold_constant(512 + 32, CRC32C_POLY);
    stripe_k2 = fold_constant(512 - 32, CRC32C_POLY);
#endif
    zip_table_init();
    for (unsigned i = 0; i < 3; i++) {
        big_k[i] = reflect32(xpow_mod(8u * 40u * BIG_M * (i + 1) - 33, CRC32C_POLY));
        small_k[i] = reflect32(xpow_mod(8u * 40u * SMALL_M * (i + 1) - 33, CRC32C_POLY));
        both_k[i] = reflect32(xpow_mod(8u * BOTH_STRIPE * (i + 1) - 33, CRC32C_POLY));
    }
    PyObject *module = PyModule_Create(&definition);
    if (module == NULL) return NULL;
    if (PyModule_AddObject(module, "accelerated", PyBool_FromLong(have_fold)) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddObject(module, "wide", PyBool_FromLong(have_wide)) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
