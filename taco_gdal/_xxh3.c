/* XXH3-64 of many small buffers in one call, by the system's libxxhash.
 *
 * The ZIP writer digests small samples 16 at a time (``checksum.batch_digest``).
 * The xxhash wheel is built for SSE2: about 0.9 us per 16 KiB sample on the
 * AMD EPYC this project is measured on.  Debian's libxxhash dispatches to AVX2
 * (or AVX-512) code at run time, but a ctypes call costs about 1 us, more than
 * that code saves.  ``many`` makes the calls from C: one Python call per batch,
 * the library's vector code for every buffer.
 *
 * The library is opened by its soname at import (``dlopen``, never linked: the
 * package installs and imports without it); ``available`` says whether it was
 * found.  ``checksum.py`` uses ``many`` only after it gave the wheel's values
 * for every size class of XXH3.
 *
 * Python API (module ``taco_gdal._xxh3``):
 *   available: True when libxxhash's dispatching XXH3 was found.
 *   many(buffers) -> list[int]: XXH3-64 (seed 0) of each buffer of a list, in
 *     order; the GIL is kept (small buffers: releasing it costs more).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>

typedef uint64_t (*xxh3_fn)(const void *, size_t);

static xxh3_fn xxh3 = NULL;

static const char SONAME[] = "libxxhash.so.0";
static const char SYMBOL[] = "XXH3_64bits_dispatch";

/* many(buffers) -> list[int] */
static PyObject *many(PyObject *module, PyObject *buffers) {
    if (xxh3 == NULL) {
        PyErr_Format(PyExc_OSError, "no %s in %s", SYMBOL, SONAME);
        return NULL;
    }
    if (!PyList_Check(buffers)) {
        PyErr_Format(PyExc_TypeError, "expected a list of buffers, found %.100s",
                     Py_TYPE(buffers)->tp_name);
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(buffers);
    PyObject *result = PyList_New(n);
    if (result == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(buffers, i);
        uint64_t value;
        if (PyBytes_CheckExact(item)) {
            value = xxh3(PyBytes_AS_STRING(item), (size_t)PyBytes_GET_SIZE(item));
        } else {
            Py_buffer view;
            if (PyObject_GetBuffer(item, &view, PyBUF_SIMPLE) < 0) {
                Py_DECREF(result);
                return NULL;
            }
            value = xxh3(view.buf, (size_t)view.len);
            PyBuffer_Release(&view);
        }
        PyObject *number = PyLong_FromUnsignedLongLong(value);
        if (number == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyList_SET_ITEM(result, i, number);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"many", many, METH_O, "many(buffers) -> list[int]: XXH3-64 of each buffer, in order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "_xxh3", "XXH3-64 of many buffers by the system's libxxhash.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__xxh3(void) {
    void *library = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
    if (library != NULL) xxh3 = (xxh3_fn)dlsym(library, SYMBOL);
    PyObject *module = PyModule_Create(&definition);
    if (module == NULL) return NULL;
    if (PyModule_AddObject(module, "available", PyBool_FromLong(xxh3 != NULL)) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
