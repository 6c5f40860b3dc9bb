/* SHA-256 of small members on a native thread that never takes the GIL.
 *
 * The ZIP writer holds each small member in a bytes object while it writes
 * it.  A Python helper thread cannot digest them alongside: every hashlib
 * call takes and gives back the GIL, and each hand-off with the writing
 * thread waits for a thread to wake.  A helper process (write/_digest_process.py)
 * avoids the GIL but costs the writer a flush and a pipe message every 64
 * members, and the helper reads every member back.
 *
 * Here the writing thread puts a reference to each member into a ring (a
 * few machine instructions: no lock, no system call), and a POSIX thread,
 * started with the object and running without the GIL, digests the members
 * in place and writes each digest into its slot: up to three members at
 * once with the CPU's SHA extensions where it has them (_sha256_lanes.h,
 * about twice OpenSSL's speed on one member at a time), else with OpenSSL.  The writer wakes that thread once per batch
 * (64 members or 1 MiB), not per member, and takes finished slots back (the
 * digest, and the reference dropped) while it submits.  When the thread is
 * a full ring behind (the other CPU is busy), the writer digests the member
 * itself, so a busy machine shares the work instead of waiting.
 *
 * Python API (module ``taco_gdal._sha256_thread``):
 *   Digester(cpus=None): starts the thread (named "taco-sha256"), placed on
 *     ``cpus`` (CPU numbers) when given.
 *   Digester.submit(data) -> int: the member's number (its place in digests()).
 *   Digester.digests() -> bytes: the 32-byte digests of every member submitted,
 *     in order; waits (GIL released) for the last ones.
 *   Digester.close(): stops the thread (digests not taken back are dropped).
 *   sha256_many(buffers) -> bytes: the 32-byte digests of a sequence of
 *     buffers, concatenated, computed on the calling thread (GIL released).
 *   Sha256Stream(): a running SHA-256; .update(data), .digest() -> 32 bytes (once).
 *   update_many(streams, buffers): streams[i].update(buffers[i]) for every i, the
 *     streams' whole blocks in lanes (GIL released; a stream at most once).  The
 *     ZIP writer's digest thread feeds the rest of one large member and the start
 *     of the next together this way (write/_copy.py).
 *   LANES: messages digested at once (0: the CPU has no SHA extensions; OpenSSL).
 */
#define _GNU_SOURCE 1 /* pthread_setaffinity_np */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "_sha256_lanes.h"

#define DIGEST 32
#define RING 1024                 /* slots: members submitted and not taken back */
#define WAKE_MEMBERS 64           /* the thread is woken once this many are waiting... */
#define WAKE_BYTES (1u << 20)     /* ...or this many bytes */
#define SWEEP 256                 /* finished slots taken back at once */
#define HELD_BYTES (64u << 20)    /* bytes referenced by the ring, at most */
#define CHUNK 16                  /* slots the thread digests between moves of the tail */

typedef struct {
    Py_buffer view;               /* the member's bytes (a reference to their object) */
    Py_ssize_t number;
    unsigned char digest[DIGEST];
} Slot;

typedef struct {
    PyObject_HEAD
    Slot *ring;
    unsigned char *out;           /* digests of members 0, 1, 2... (writer's side only) */
    Py_ssize_t out_capacity;
    Py_ssize_t count;             /* members submitted */
    size_t head;                  /* slots filled (written by the writer only) */
    size_t swept;                 /* slots taken back (writer only) */
    size_t pending_bytes;         /* bytes submitted since the last publish (writer only) */
    size_t held_bytes;            /* bytes in slots not taken back (writer only) */
    _Atomic size_t published;     /* slots the thread may take (written by the writer) */
    _Atomic size_t tail;          /* slots the thread has digested */
    _Atomic int sleeping;
    _Atomic int waiting;          /* the writer waits for the tail */
    _Atomic int stopping;
    _Atomic int failed;
    pthread_mutex_t lock;
    pthread_cond_t wake;          /* writer -> thread: more to do, or stop */
    pthread_cond_t done;          /* thread -> writer: the tail moved */
    pthread_t thread;
    int started;
    unsigned long generation;     /* fork_generation when made: changed in a forked child */
    EVP_MD *md;                   /* SHA-256, fetched once */
    EVP_MD_CTX *writer_ctx;       /* for members the writer digests itself */
    cpu_set_t cpus;
    int pinned;
} Digester;

/* Counts fork()s (a pthread_atfork child handler): a Digester made before one
 * has no thread in the child.  Cheaper than getpid(), a system call, per submit. */
static unsigned long fork_generation = 0;
static void forked(void) { fork_generation++; }

static int sha256(EVP_MD_CTX *ctx, const EVP_MD *md, const void *data, size_t n,
                  unsigned char *digest) {
    unsigned int length = 0;
    return EVP_DigestInit_ex2(ctx, md, NULL) && EVP_DigestUpdate(ctx, data, n) &&
           EVP_DigestFinal_ex(ctx, digest, &length) && length == DIGEST;
}

/* Messages sha256_lanes() keeps in flight; 0 where the CPU lacks the extensions. */
static int lanes_width = 0;
/* The CPU uses AVX: a stream's update first clears the upper vector state (any thread). */
static int avx_present = 0;

/* The SHA-256 of ``count`` buffers into digest + 32 * i: in lanes, else OpenSSL. */
static int sha256_batch(EVP_MD_CTX *ctx, const EVP_MD *md, const uint8_t *const *data,
                        const size_t *size, size_t count, unsigned char *digest) {
    if (lanes_width) {
        sha256_lanes(data, size, count, digest, lanes_width);
        return 1;
    }
    for (size_t i = 0; i < count; i++)
        if (!sha256(ctx, md, data[i], size[i], digest + DIGEST * i)) return 0;
    return 1;
}

/* Slots first .. first + count - 1 digested into their own digest fields. */
static int digest_slots(Digester *self, EVP_MD_CTX *ctx, size_t first, size_t count) {
    const uint8_t *data[CHUNK];
    size_t size[CHUNK];
    unsigned char digest[CHUNK * DIGEST];
    for (size_t i = 0; i < count; i++) {
        const Slot *slot = &self->ring[(first + i) % RING];
        data[i] = slot->view.buf;
        size[i] = (size_t)slot->view.len;
    }
    if (!sha256_batch(ctx, self->md, data, size, count, digest)) return 0;
    for (size_t i = 0; i < count; i++)
        memcpy(self->ring[(first + i) % RING].digest, digest + DIGEST * i, DIGEST);
    return 1;
}

static void *run(void *arg) {
    Digester *self = arg;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL) atomic_store(&self->failed, 1);
    pthread_setname_np(pthread_self(), "taco-sha256"); /* as /proc and top show it */
    if (self->pinned) pthread_setaffinity_np(pthread_self(), sizeof self->cpus, &self->cpus);
    size_t tail = atomic_load(&self->tail);
    for (;;) {
        size_t published = atomic_load(&self->published);
        if (tail == published) {
            pthread_mutex_lock(&self->lock);
            atomic_store(&self->sleeping, 1);
            while ((published = atomic_load(&self->published)) == tail &&
                   !atomic_load(&self->stopping))
                pthread_cond_wait(&self->wake, &self->lock);
            atomic_store(&self->sleeping, 0);
            pthread_mutex_unlock(&self->lock);
            if (published == tail) break; /* stopping, nothing left */
        }
        while (tail != published) {
            size_t count = published - tail < CHUNK ? published - tail : CHUNK;
            if (!atomic_load(&self->failed) && (ctx == NULL || !digest_slots(self, ctx, tail, count)))
                atomic_store(&self->failed, 1);
            tail += count;
            atomic_store(&self->tail, tail);
        }
        if (atomic_load(&self->waiting)) {
            pthread_mutex_lock(&self->lock);
            pthread_cond_signal(&self->done);
            pthread_mutex_unlock(&self->lock);
        }
    }
    EVP_MD_CTX_free(ctx);
    return NULL;
}

/* Wakes the thread if it sleeps: it then takes every slot published. */
static void publish(Digester *self) {
    atomic_store(&self->published, self->head);
    self->pending_bytes = 0;
    if (atomic_load(&self->sleeping)) {
        pthread_mutex_lock(&self->lock);
        pthread_cond_signal(&self->wake);
        pthread_mutex_unlock(&self->lock);
    }
}

/* Takes back the slots the thread has digested (GIL held). */
static void sweep(Digester *self) {
    size_t tail = atomic_load(&self->tail);
    for (; self->swept != tail; self->swept++) {
        Slot *slot = &self->ring[self->swept % RING];
        memcpy(self->out + slot->number * DIGEST, slot->digest, DIGEST);
        self->held_bytes -= (size_t)slot->view.len;
        PyBuffer_Release(&slot->view);
    }
}

/* Waits, GIL released, until the thread has digested ``until`` slots. */
static void wait_for(Digester *self, size_t until) {
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&self->lock);
    atomic_store(&self->waiting, 1);
    while (atomic_load(&self->tail) - until > (size_t)-1 / 2) /* tail < until, wrapping */
        pthread_cond_wait(&self->done, &self->lock);
    atomic_store(&self->waiting, 0);
    pthread_mutex_unlock(&self->lock);
    Py_END_ALLOW_THREADS
}

static int grow(Digester *self) {
    if (self->count < self->out_capacity) return 0;
    Py_ssize_t capacity = self->out_capacity ? self->out_capacity * 2 : 4096;
    unsigned char *out = PyMem_Realloc(self->out, (size_t)capacity * DIGEST);
    if (out == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->out = out;
    self->out_capacity = capacity;
    return 0;
}

static int usable(Digester *self) {
    if (self->generation != fork_generation) {
        PyErr_SetString(PyExc_RuntimeError, "a Digester cannot be used after fork()");
        return 0;
    }
    if (!self->started) {
        PyErr_SetString(PyExc_ValueError, "the Digester is closed");
        return 0;
    }
    if (atomic_load(&self->failed)) {
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL's SHA-256 failed on the digest thread");
        return 0;
    }
    return 1;
}

static PyObject *submit(Digester *self, PyObject *data) {
    if (!usable(self) || grow(self) < 0) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    Py_ssize_t number = self->count;
    if (self->head - self->swept == RING || self->held_bytes + (size_t)view.len > HELD_BYTES)
        sweep(self);
    if (self->head - self->swept == RING || self->held_bytes + (size_t)view.len > HELD_BYTES) {
        /* the thread is a ring behind: this member is digested here */
        int ok;
        Py_BEGIN_ALLOW_THREADS
        ok = sha256(self->writer_ctx, self->md, view.buf, (size_t)view.len,
                    self->out + number * DIGEST);
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&view);
        if (!ok) {
            PyErr_SetString(PyExc_RuntimeError, "OpenSSL's SHA-256 failed");
            return NULL;
        }
    } else {
        Slot *slot = &self->ring[self->head % RING];
        slot->view = view;
        slot->number = number;
        self->head++;
        self->held_bytes += (size_t)view.len;
        self->pending_bytes += (size_t)view.len;
        size_t published = atomic_load_explicit(&self->published, memory_order_relaxed);
        if (self->head - published >= WAKE_MEMBERS || self->pending_bytes >= WAKE_BYTES)
            publish(self);
        if (self->head - self->swept >= SWEEP + WAKE_MEMBERS) sweep(self);
    }
    self->count++;
    return PyLong_FromSsize_t(number);
}

static PyObject *digests(Digester *self, PyObject *Py_UNUSED(ignored)) {
    if (!usable(self)) return NULL;
    publish(self);
    wait_for(self, self->head);
    sweep(self);
    if (!usable(self)) return NULL;
    return PyBytes_FromStringAndSize((const char *)self->out, self->count * DIGEST);
}

static void stop(Digester *self) {
    if (!self->started) return;
    self->started = 0;
    if (self->generation == fork_generation) {
        pthread_mutex_lock(&self->lock);
        atomic_store(&self->stopping, 1);
        pthread_cond_signal(&self->wake);
        pthread_mutex_unlock(&self->lock);
        Py_BEGIN_ALLOW_THREADS
        pthread_join(self->thread, NULL);
        Py_END_ALLOW_THREADS
        sweep(self);
    }
    /* slots never published (or, after fork(), never digested here): drop the references */
    for (; self->swept != self->head; self->swept++)
        PyBuffer_Release(&self->ring[self->swept % RING].view);
}

static PyObject *close_method(Digester *self, PyObject *Py_UNUSED(ignored)) {
    stop(self);
    Py_RETURN_NONE;
}

/* ``cpus`` (an iterable of CPU numbers, or None) as a set; ``pinned`` when not empty. */
static int cpu_set_from(PyObject *cpus, cpu_set_t *set, int *pinned) {
    CPU_ZERO(set);
    *pinned = 0;
    if (cpus == Py_None) return 1;
    PyObject *iterator = PyObject_GetIter(cpus), *item;
    if (iterator == NULL) return 0;
    while ((item = PyIter_Next(iterator)) != NULL) {
        long cpu = PyLong_AsLong(item);
        Py_DECREF(item);
        if (cpu == -1 && PyErr_Occurred()) break;
        if (cpu < 0 || cpu >= CPU_SETSIZE) {
            PyErr_Format(PyExc_ValueError, "CPU %ld is not in 0..%d", cpu, CPU_SETSIZE - 1);
            break;
        }
        CPU_SET((int)cpu, set);
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred()) return 0;
    *pinned = CPU_COUNT(set) > 0;
    return 1;
}

#include "_sha256_scan.h"

static int init(Digester *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"cpus", NULL};
    PyObject *cpus = Py_None;
    if (self->ring != NULL || self->md != NULL) {
        PyErr_SetString(PyExc_TypeError, "Digester.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Digester", keywords, &cpus)) return -1;
    if (!cpu_set_from(cpus, &self->cpus, &self->pinned)) return -1;
    self->md = EVP_MD_fetch(NULL, "SHA256", NULL);
    self->writer_ctx = EVP_MD_CTX_new();
    if (self->md == NULL || self->writer_ctx == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL has no SHA-256 here");
        return -1;
    }
    self->ring = PyMem_Calloc(RING, sizeof(Slot));
    if (self->ring == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    pthread_mutex_init(&self->lock, NULL);
    pthread_cond_init(&self->wake, NULL);
    pthread_cond_init(&self->done, NULL);
    self->generation = fork_generation;
    int error = pthread_create(&self->thread, NULL, run, self);
    if (error != 0) {
        errno = error;
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    self->started = 1;
    return 0;
}

static void dealloc(Digester *self) {
    stop(self);
    if (self->ring != NULL) {
        pthread_mutex_destroy(&self->lock);
        pthread_cond_destroy(&self->wake);
        pthread_cond_destroy(&self->done);
    }
    PyMem_Free(self->ring);
    PyMem_Free(self->out);
    EVP_MD_CTX_free(self->writer_ctx);
    EVP_MD_free(self->md);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* sha256_many(buffers) -> bytes: every buffer's digest, in order, on this thread. */
static PyObject *sha256_many(PyObject *Py_UNUSED(module), PyObject *buffers) {
    PyObject *sequence = PySequence_Fast(buffers, "sha256_many() takes a sequence of buffers");
    if (sequence == NULL) return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence), held = 0;
    Py_buffer *views = PyMem_Calloc((size_t)count + 1, sizeof(Py_buffer));
    const uint8_t **data = PyMem_Calloc((size_t)count + 1, sizeof(uint8_t *));
    size_t *size = PyMem_Calloc((size_t)count + 1, sizeof(size_t));
    PyObject *result = NULL;
    EVP_MD *md = NULL;
    EVP_MD_CTX *ctx = NULL;
    size_t total = 0;
    if (views == NULL || data == NULL || size == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (; held < count; held++) {
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(sequence, held), &views[held],
                               PyBUF_SIMPLE) < 0)
            goto done;
        data[held] = views[held].buf;
        size[held] = (size_t)views[held].len;
        total += size[held];
    }
    if (!lanes_width) {
        md = EVP_MD_fetch(NULL, "SHA256", NULL);
        ctx = EVP_MD_CTX_new();
        if (md == NULL || ctx == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "OpenSSL has no SHA-256 here");
            goto done;
        }
    }
    result = PyBytes_FromStringAndSize(NULL, count * DIGEST);
    if (result == NULL) goto done;
    int ok;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    if (total >= (1u << 16)) {
        Py_BEGIN_ALLOW_THREADS
        ok = sha256_batch(ctx, md, data, size, (size_t)count, out);
        Py_END_ALLOW_THREADS
    } else {
        ok = sha256_batch(ctx, md, data, size, (size_t)count, out);
    }
    if (!ok) {
        Py_CLEAR(result);
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL's SHA-256 failed");
    }
done:
    while (held > 0) PyBuffer_Release(&views[--held]);
    PyMem_Free(views);
    PyMem_Free(data);
    PyMem_Free(size);
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
    Py_DECREF(sequence);
    return result;
}

/* A running SHA-256 that update_many() advances alongside others (the ZIP
 * writer's digest thread follows two large members at once: the rest of the
 * last one and the one being copied).  The state is kept as the lanes want it;
 * without the SHA extensions an OpenSSL context runs instead. */
typedef struct {
    PyObject_HEAD
    __m128i s0, s1;               /* whole blocks so far (lanes) */
    uint8_t rest[64];             /* the bytes after them */
    uint64_t length;              /* bytes so far */
    EVP_MD_CTX *ctx;              /* OpenSSL's state, when there are no lanes */
    int finished;                 /* digest() was called */
    _Atomic int busy;             /* an update is running (GIL released) */
} Stream;

static PyTypeObject StreamType;

static int stream_init(Stream *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, ":Sha256Stream", keywords)) return -1;
    if (self->ctx != NULL || self->length || self->finished) {
        PyErr_SetString(PyExc_TypeError, "Sha256Stream.__init__ called twice");
        return -1;
    }
    if (lanes_width) {
        sha256_lanes_init(&self->s0, &self->s1);
        return 0;
    }
    EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
    self->ctx = EVP_MD_CTX_new();
    int ok = md != NULL && self->ctx != NULL && EVP_DigestInit_ex2(self->ctx, md, NULL);
    EVP_MD_free(md);
    if (!ok) {
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL has no SHA-256 here");
        return -1;
    }
    return 0;
}

static void stream_dealloc(Stream *self) {
    EVP_MD_CTX_free(self->ctx);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Feeds ``size[i]`` bytes at ``data[i]`` to ``stream[i]``, for i < count <= LANES_MAX,
 * the streams' whole blocks in lanes (GIL released: the caller holds each busy flag). */
static int stream_absorb(Stream **stream, const uint8_t **data, size_t *size, int count) {
    if (!lanes_width) {
        for (int i = 0; i < count; i++)
            if (!EVP_DigestUpdate(stream[i]->ctx, data[i], size[i])) return 0;
        return 1;
    }
    __m128i s0[LANES_MAX], s1[LANES_MAX];
    const uint8_t *next[LANES_MAX];
    size_t blocks[LANES_MAX];
    lanes_clean_upper(avx_present);
    for (int i = 0; i < count; i++) {
        Stream *st = stream[i];
        const uint8_t *p = data[i];
        size_t n = size[i], used = (size_t)(st->length & 63);
        s0[i] = st->s0;
        s1[i] = st->s1;
        st->length += n;
        if (used) { /* first complete the block begun by the last update */
            size_t take = n < 64 - used ? n : 64 - used;
            memcpy(st->rest + used, p, take);
            p += take;
            n -= take;
            if (used + take == 64) {
                const uint8_t *whole = st->rest;
                size_t one = 1;
                sha256_lanes_blocks(&s0[i], &s1[i], &whole, &one, 1);
            }
        }
        next[i] = p;
        blocks[i] = n >> 6;
    }
    sha256_lanes_blocks(s0, s1, next, blocks, count);
    for (int i = 0; i < count; i++) {
        stream[i]->s0 = s0[i];
        stream[i]->s1 = s1[i];
        size_t left = (size_t)(stream[i]->length & 63);
        /* next[i] is past the whole blocks; what remains of this update is the rest */
        if (left && next[i] != data[i] + size[i]) memcpy(stream[i]->rest, next[i], left);
    }
    return 1;
}

/* update_many(streams, buffers): streams[i].update(buffers[i]) for every i, the streams'
 * blocks interleaved in lanes; each stream at most once. */
static PyObject *update_many(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *streams, *buffers;
    if (!PyArg_ParseTuple(args, "OO:update_many", &streams, &buffers)) return NULL;
    PyObject *st_seq = PySequence_Fast(streams, "update_many() takes a sequence of streams");
    if (st_seq == NULL) return NULL;
    PyObject *buf_seq = PySequence_Fast(buffers, "update_many() takes a sequence of buffers");
    if (buf_seq == NULL) {
        Py_DECREF(st_seq);
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(st_seq), held = 0, claimed = 0;
    Py_buffer *views = NULL;
    Stream **stream = NULL;
    PyObject *result = NULL;
    if (PySequence_Fast_GET_SIZE(buf_seq) != count) {
        PyErr_Format(PyExc_ValueError, "update_many(): %zd streams but %zd buffers", count,
                     PySequence_Fast_GET_SIZE(buf_seq));
        goto done;
    }
    views = PyMem_Calloc((size_t)count + 1, sizeof(Py_buffer));
    stream = PyMem_Calloc((size_t)count + 1, sizeof(Stream *));
    if (views == NULL || stream == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (; claimed < count; claimed++) {
        PyObject *item = PySequence_Fast_GET_ITEM(st_seq, claimed);
        if (!PyObject_TypeCheck(item, &StreamType)) {
            PyErr_Format(PyExc_TypeError, "update_many(): expected Sha256Stream, found %s",
                         Py_TYPE(item)->tp_name);
            goto done;
        }
        Stream *st = (Stream *)item;
        int idle = 0;
        if (st->finished) {
            PyErr_SetString(PyExc_ValueError, "update_many(): a stream whose digest() was taken");
            goto done;
        }
        if (!atomic_compare_exchange_strong(&st->busy, &idle, 1)) {
            PyErr_SetString(PyExc_RuntimeError,
                            "update_many(): a stream given twice or updated by another thread");
            goto done;
        }
        stream[claimed] = st;
    }
    for (; held < count; held++)
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(buf_seq, held), &views[held],
                               PyBUF_SIMPLE) < 0)
            goto done;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t first = 0; ok && first < count; first += LANES_MAX) {
        const uint8_t *data[LANES_MAX];
        size_t size[LANES_MAX];
        int group = count - first < LANES_MAX ? (int)(count - first) : LANES_MAX;
        for (int i = 0; i < group; i++) {
            data[i] = views[first + i].buf;
            size[i] = (size_t)views[first + i].len;
        }
        ok = stream_absorb(stream + first, data, size, group);
    }
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL's SHA-256 failed");
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    while (held > 0) PyBuffer_Release(&views[--held]);
    while (claimed > 0) atomic_store(&stream[--claimed]->busy, 0);
    PyMem_Free(views);
    PyMem_Free(stream);
    Py_DECREF(st_seq);
    Py_DECREF(buf_seq);
    return result;
}

static PyObject *stream_update(Stream *self, PyObject *data) {
    PyObject *args = Py_BuildValue("((O)(O))", (PyObject *)self, data);
    if (args == NULL) return NULL;
    PyObject *result = update_many(NULL, args);
    Py_DECREF(args);
    return result;
}

static PyObject *stream_digest(Stream *self, PyObject *Py_UNUSED(ignored)) {
    int idle = 0;
    if (self->finished) {
        PyErr_SetString(PyExc_ValueError, "Sha256Stream.digest() was already taken");
        return NULL;
    }
    if (!atomic_compare_exchange_strong(&self->busy, &idle, 1)) {
        PyErr_SetString(PyExc_RuntimeError, "Sha256Stream.digest() during an update");
        return NULL;
    }
    uint8_t digest[DIGEST];
    unsigned int length = DIGEST;
    int ok = 1;
    if (lanes_width)
        sha256_lanes_final(self->s0, self->s1, self->rest, self->length, digest);
    else
        ok = EVP_DigestFinal_ex(self->ctx, digest, &length) && length == DIGEST;
    self->finished = 1;
    atomic_store(&self->busy, 0);
    if (!ok) {
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL's SHA-256 failed");
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)digest, DIGEST);
}

static PyMethodDef stream_methods[] = {
    {"update", (PyCFunction)stream_update, METH_O,
     "update(data): feed ``data`` (GIL released while it is digested)."},
    {"digest", (PyCFunction)stream_digest, METH_NOARGS,
     "digest() -> bytes: the 32-byte SHA-256 of everything fed; the stream then ends."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "taco_gdal._sha256_thread.Sha256Stream",
    .tp_basicsize = sizeof(Stream),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A running SHA-256 that update_many() advances in lanes with others.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)stream_init,
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_methods = stream_methods,
};

static PyMethodDef module_methods[] = {
    {"sha256_many", (PyCFunction)sha256_many, METH_O,
     "sha256_many(buffers) -> bytes: the 32-byte SHA-256 of each buffer, concatenated."},
    {"update_many", (PyCFunction)update_many, METH_VARARGS,
     "update_many(streams, buffers): feed buffers[i] to streams[i], in lanes."},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef digester_methods[] = {
    {"submit", (PyCFunction)submit, METH_O,
     "submit(data) -> int: digest ``data`` (held until digested); its member number."},
    {"digests", (PyCFunction)digests, METH_NOARGS,
     "digests() -> bytes: the 32-byte SHA-256 of every member submitted, in order."},
    {"close", (PyCFunction)close_method, METH_NOARGS, "close(): stop the thread."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DigesterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "taco_gdal._sha256_thread.Digester",
    .tp_basicsize = sizeof(Digester),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "SHA-256 of submitted buffers, computed by a native thread without the GIL.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)init,
    .tp_dealloc = (destructor)dealloc,
    .tp_methods = digester_methods,
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "_sha256_thread",
    "SHA-256 of small members on a native thread that never takes the GIL.", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

static int add_type(PyObject *module, const char *name, PyTypeObject *type) {
    Py_INCREF(type);
    if (PyModule_AddObject(module, name, (PyObject *)type) == 0) return 0;
    Py_DECREF(type);
    return -1;
}

PyMODINIT_FUNC PyInit__sha256_thread(void) {
    if (PyType_Ready(&DigesterType) < 0 || PyType_Ready(&StreamType) < 0 ||
        PyType_Ready(&ScannerType) < 0)
        return NULL;
    if (pthread_atfork(NULL, NULL, forked) != 0) {
        PyErr_SetString(PyExc_OSError, "pthread_atfork failed");
        return NULL;
    }
    lanes_width = sha256_lanes_supported() ? LANES_MAX : 0;
    avx_present = lanes_avx_present();
    PyObject *module = PyModule_Create(&definition);
    if (module == NULL) return NULL;
    if (PyModule_AddIntConstant(module, "LANES", lanes_width) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    if (add_type(module, "Digester", &DigesterType) < 0 ||
        add_type(module, "Sha256Stream", &StreamType) < 0 ||
        add_type(module, "Scanner", &ScannerType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
