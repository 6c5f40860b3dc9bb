/* SHA-256 of the small members of a ZIP being written, found by a native
 * thread that reads the output as it grows (part of _sha256_thread.c).
 *
 * The thread does what the helper process of write/_digest_process.py does,
 * without an interpreter to start (12 ms of the other CPU) or to end: it
 * reads the output up to its size (fstat, 1 MiB per pread), walks the local
 * headers, digests every member of at most ``limit`` bytes (up to three at
 * once with the SHA extensions) and appends, in file order, its position and
 * size (little-endian 64-bit each) to one file and the digest's stored form
 * (``sha256:`` and 64 hex digits) to another, which the writer maps instead
 * of formatting the digests itself.  When it has caught up it naps (1 ms,
 * doubling to 8 ms) on a condition variable that only finish() signals, so
 * the writing thread never wakes it while members are written.  finish(end)
 * gives where the members end and waits (GIL released) for the thread to
 * digest the rest.  The writer trusts an answer only when its position and
 * size are the row's, and digests what is missing itself, so a thread that
 * stopped early loses nothing.
 *
 * Python API (in module ``taco_gdal._sha256_thread``):
 *   Scanner(fd, limit, places, stored, cpus=None): starts the thread on a
 *     duplicate of ``fd`` (a descriptor of the output open for reading; the
 *     Scanner closes its own), appending to ``places`` and ``stored`` (the
 *     caller's descriptors, duplicated too).
 *   Scanner.finish(end) -> int: how the thread ended (0: every member before
 *     ``end`` read; 3: a read or an append failed, or the bytes at a member's
 *     place are not a member header; 5: no progress towards ``end``).
 *   Scanner.close(): stops the thread.
 */

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#define SCAN_WINDOW (1u << 20)      /* bytes read at once */
#define SCAN_HEADER 30              /* a local file header, without name and extra field */
#define SCAN_SIGNATURE 0x04034b50u
#define SCAN_PLACE 16               /* position, size */
#define SCAN_PREFIX "sha256:"
#define SCAN_STORED (sizeof SCAN_PREFIX - 1 + 2 * DIGEST) /* the digest's stored form */
#define SCAN_GROUP 16               /* members digested together */
#define SCAN_NAP_MAX_MS 8
#define SCAN_THREAD_NAME "taco-zip-sha256" /* as /proc and top show it (15 characters at most) */

enum { SCAN_OK = 0, SCAN_BROKEN = 3, SCAN_STUCK = 5 };

typedef struct {
    PyObject_HEAD
    int fd;                       /* the Scanner's own descriptor of the output */
    uint64_t limit;
    uint8_t *window;
    size_t window_size;
    int places, stored;           /* where the answers go (the Scanner's own descriptors) */
    int status;
    int64_t end;                  /* -1 until finish() (under lock) */
    int stopping;                 /* under lock */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int started, joined;
    unsigned long generation;
    cpu_set_t cpus;
    int pinned;
    EVP_MD *md;
    EVP_MD_CTX *ctx;
} Scanner;

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p) { return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16; }
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

/* A ZIP64 member's stored size, from its extra field (tag 1: original size,
 * then stored size, each present only where the header holds 0xFFFFFFFF). */
static int zip64_size(const uint8_t *header, const uint8_t *extra, size_t length, uint64_t *size) {
    const uint8_t *end = extra + length;
    while (extra + 4 <= end) {
        uint16_t tag = le16(extra), n = le16(extra + 2);
        if (extra + 4 + n > end) return 0;
        if (tag == 1) {
            size_t values = n / 8;
            int original_too = le32(header + 22) == 0xFFFFFFFFu && values > 1;
            if (values == 0) return 0;
            *size = le64(extra + 4 + (original_too ? 8 : 0));
            return 1;
        }
        extra += 4 + n;
    }
    return 0;
}

/* Appends all of ``data`` to ``fd``. */
static int append_all(int fd, const uint8_t *data, size_t size) {
    while (size > 0) {
        ssize_t done = write(fd, data, size);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return 0;
        data += done;
        size -= (size_t)done;
    }
    return 1;
}

/* Digests ``n`` members and appends their stored forms, then their places (a
 * place is never written without its digest; the reader takes the shorter count). */
static int scan_record(Scanner *self, const uint8_t *const *data, const size_t *size,
                       const uint64_t *position, size_t n) {
    static const char hex[] = "0123456789abcdef";
    if (n == 0) return 1;
    unsigned char digest[SCAN_GROUP * DIGEST];
    uint8_t stored[SCAN_GROUP * SCAN_STORED], places[SCAN_GROUP * SCAN_PLACE];
    if (!sha256_batch(self->ctx, self->md, data, size, n, digest)) return 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t *text = stored + i * SCAN_STORED;
        memcpy(text, SCAN_PREFIX, sizeof SCAN_PREFIX - 1);
        text += sizeof SCAN_PREFIX - 1;
        for (size_t j = 0; j < DIGEST; j++) {
            text[2 * j] = (uint8_t)hex[digest[DIGEST * i + j] >> 4];
            text[2 * j + 1] = (uint8_t)hex[digest[DIGEST * i + j] & 15];
        }
        uint64_t values[2] = {position[i], size[i]};
        memcpy(places + i * SCAN_PLACE, values, SCAN_PLACE); /* x86-64, aarch64: little-endian */
    }
    return append_all(self->stored, stored, n * SCAN_STORED) &&
           append_all(self->places, places, n * SCAN_PLACE);
}

/* Digests the members whose bytes all lie below ``readable``, from ``*position``;
 * moves ``*position`` past them and sets ``*need`` to what must be readable to go
 * on.  0 when the bytes are not a ZIP's members or cannot be read. */
static int scan_some(Scanner *self, uint64_t *position, uint64_t readable, uint64_t *need) {
    *need = *position + SCAN_HEADER;
    while (*position + SCAN_HEADER <= readable) {
        size_t want = readable - *position < self->window_size ? (size_t)(readable - *position)
                                                               : self->window_size;
        ssize_t got = pread(self->fd, self->window, want, (off_t)*position);
        if (got < 0) {
            if (errno == EINTR) continue;
            return 0;
        }
        const uint8_t *block = self->window;
        size_t length = (size_t)got, at = 0, n = 0;
        const uint8_t *data[SCAN_GROUP];
        size_t size[SCAN_GROUP];
        uint64_t place[SCAN_GROUP];
        int broken = 0;
        while (at + SCAN_HEADER <= length) {
            const uint8_t *header = block + at;
            uint64_t stored = le32(header + 18);
            size_t start = at + SCAN_HEADER + le16(header + 26) + le16(header + 28);
            if (le32(header) != SCAN_SIGNATURE) {
                broken = 1;
                break;
            }
            if (start > length) break;
            if (stored == 0xFFFFFFFFu &&
                !zip64_size(header, header + SCAN_HEADER + le16(header + 26), le16(header + 28),
                            &stored)) {
                broken = 1;
                break;
            }
            if (stored > (1ull << 62)) { /* a declared size no file has */
                broken = 1;
                break;
            }
            uint64_t stop = start + stored;
            if (*position + stop > readable) { /* still being written */
                *need = *position + stop;
                if (stored > self->limit) at = (size_t)stop; /* only its next header is awaited */
                break;
            }
            if (stored <= self->limit) {
                if (stop > length) break; /* a short read: read again from this member */
                data[n] = block + start;
                size[n] = (size_t)stored;
                place[n] = *position + start;
                if (++n == SCAN_GROUP) {
                    if (!scan_record(self, data, size, place, n)) return 0;
                    n = 0;
                }
            }
            at = (size_t)stop;
        }
        if (!scan_record(self, data, size, place, n)) return 0;
        if (broken) return 0; /* what came before is digested; the writer digests the rest */
        if (at == 0) break;
        *position += at;
        if (*need < *position + SCAN_HEADER) *need = *position + SCAN_HEADER;
    }
    return 1;
}

/* Naps up to ``ms`` milliseconds unless finish() or close() wakes it; the end
 * given (or -1).  Returns -2 when stopping. */
static int64_t scan_nap(Scanner *self, int ms) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += (long)ms * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec += 1;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&self->lock);
    while (self->end < 0 && !self->stopping &&
           pthread_cond_timedwait(&self->wake, &self->lock, &until) == 0) {
    }
    int64_t end = self->stopping ? -2 : self->end;
    pthread_mutex_unlock(&self->lock);
    return end;
}

static void *scan_run(void *arg) {
    Scanner *self = arg;
    if (self->pinned) pthread_setaffinity_np(pthread_self(), sizeof self->cpus, &self->cpus);
    uint64_t position = 0, need = 0;
    int64_t end = -1;
    int nap = 1;
    for (;;) {
        uint64_t readable;
        if (end >= 0) {
            readable = (uint64_t)end;
        } else {
            struct stat status;
            if (fstat(self->fd, &status) != 0) {
                self->status = SCAN_BROKEN;
                return NULL;
            }
            readable = (uint64_t)status.st_size;
        }
        uint64_t moved = position;
        if (readable >= need && !scan_some(self, &moved, readable, &need)) {
            self->status = SCAN_BROKEN;
            return NULL;
        }
        if (end >= 0 && moved >= (uint64_t)end) {
            self->status = SCAN_OK;
            return NULL;
        }
        if (end >= 0 && moved == position) {
            self->status = SCAN_STUCK;
            return NULL;
        }
        nap = moved != position ? 1 : (2 * nap > SCAN_NAP_MAX_MS ? SCAN_NAP_MAX_MS : 2 * nap);
        position = moved;
        if (end < 0) {
            end = scan_nap(self, nap);
            if (end == -2) {
                self->status = SCAN_STUCK;
                return NULL;
            }
        }
    }
}

static int scanner_usable(Scanner *self) {
    if (self->generation != fork_generation) {
        PyErr_SetString(PyExc_RuntimeError, "a Scanner cannot be used after fork()");
        return 0;
    }
    if (!self->started || self->joined) {
        PyErr_SetString(PyExc_ValueError, "the Scanner is finished or closed");
        return 0;
    }
    return 1;
}

/* Gives the end (or asks it to stop) and waits for the thread, GIL released. */
static void scanner_join(Scanner *self, int64_t end, int stopping) {
    pthread_mutex_lock(&self->lock);
    if (stopping) self->stopping = 1;
    else self->end = end;
    pthread_cond_signal(&self->wake);
    pthread_mutex_unlock(&self->lock);
    Py_BEGIN_ALLOW_THREADS
    pthread_join(self->thread, NULL);
    Py_END_ALLOW_THREADS
    self->joined = 1;
}

static PyObject *scanner_finish(Scanner *self, PyObject *arg) {
    long long end = PyLong_AsLongLong(arg);
    if (end == -1 && PyErr_Occurred()) return NULL;
    if (end < 0) {
        PyErr_Format(PyExc_ValueError, "the members' end must be >= 0, not %lld", end);
        return NULL;
    }
    if (!scanner_usable(self)) return NULL;
    scanner_join(self, (int64_t)end, 0);
    return PyLong_FromLong(self->status);
}

static void scanner_stop(Scanner *self) {
    if (self->started && !self->joined && self->generation == fork_generation)
        scanner_join(self, 0, 1);
    self->joined = 1;
    if (self->fd >= 0) close(self->fd);
    if (self->places >= 0) close(self->places);
    if (self->stored >= 0) close(self->stored);
    self->fd = self->places = self->stored = -1;
}

static PyObject *scanner_close(Scanner *self, PyObject *Py_UNUSED(ignored)) {
    scanner_stop(self);
    Py_RETURN_NONE;
}

static int scanner_init(Scanner *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"fd", "limit", "places", "stored", "cpus", NULL};
    int fd, places, stored;
    long long limit;
    PyObject *cpus = Py_None;
    if (self->window != NULL) {
        PyErr_SetString(PyExc_TypeError, "Scanner.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iLii|O:Scanner", keywords, &fd, &limit,
                                     &places, &stored, &cpus))
        return -1;
    if (limit < 0 || limit > (1LL << 30)) {
        PyErr_Format(PyExc_ValueError, "limit must be in 0..2**30, not %lld", limit);
        return -1;
    }
    if (!cpu_set_from(cpus, &self->cpus, &self->pinned)) return -1;
    self->limit = (uint64_t)limit;
    /* a member of ``limit`` bytes whose header starts a window fits in it */
    self->window_size = SCAN_WINDOW > (size_t)limit + SCAN_HEADER + 2 * 0xFFFF
                            ? SCAN_WINDOW
                            : (size_t)limit + SCAN_HEADER + 2 * 0xFFFF;
    self->window = PyMem_RawMalloc(self->window_size);
    if (self->window == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (!lanes_width) {
        self->md = EVP_MD_fetch(NULL, "SHA256", NULL);
        self->ctx = EVP_MD_CTX_new();
        if (self->md == NULL || self->ctx == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "OpenSSL has no SHA-256 here");
            return -1;
        }
    }
    self->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (self->fd >= 0) self->places = fcntl(places, F_DUPFD_CLOEXEC, 0);
    if (self->places >= 0) self->stored = fcntl(stored, F_DUPFD_CLOEXEC, 0);
    if (self->stored < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    self->end = -1;
    self->status = SCAN_STUCK;
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_mutex_init(&self->lock, NULL);
    pthread_cond_init(&self->wake, &attributes);
    pthread_condattr_destroy(&attributes);
    self->generation = fork_generation;
    int error = pthread_create(&self->thread, NULL, scan_run, self);
    if (error != 0) {
        errno = error;
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    pthread_setname_np(self->thread, SCAN_THREAD_NAME); /* seen in /proc once this returns */
    self->started = 1;
    return 0;
}

static PyObject *scanner_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    Scanner *self = (Scanner *)PyType_GenericNew(type, args, kwargs);
    if (self != NULL) self->fd = self->places = self->stored = -1; /* none owned yet */
    return (PyObject *)self;
}

static void scanner_dealloc(Scanner *self) {
    scanner_stop(self);
    if (self->window != NULL) {
        pthread_mutex_destroy(&self->lock);
        pthread_cond_destroy(&self->wake);
    }
    PyMem_RawFree(self->window);
    EVP_MD_CTX_free(self->ctx);
    EVP_MD_free(self->md);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef scanner_methods[] = {
    {"finish", (PyCFunction)scanner_finish, METH_O,
     "finish(end) -> int: give where the members end, wait for the thread; its status."},
    {"close", (PyCFunction)scanner_close, METH_NOARGS, "close(): stop the thread."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "taco_gdal._sha256_thread.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "SHA-256 of the small members of a ZIP being written, found by a native thread.",
    .tp_new = scanner_new,
    .tp_init = (initproc)scanner_init,
    .tp_dealloc = (destructor)scanner_dealloc,
    .tp_methods = scanner_methods,
};
