/* Line scanner for one gem5 stats.txt dump block.
 *
 * Pure-Python tokenising tops out well below a million lines per second on a
 * small machine, so the hot loop lives here.  cosim/readers/gem5_stats.py has
 * an equivalent pure-Python fallback (_scan_block_py); tests check both agree.
 *
 * scan_block(block: bytes, wanted: set[str] | None, prev: list[str] | None)
 *   -> (names: list[str], values: bytes (float64 array), bad_line: int)
 *
 * Each non-blank line is "<name> <value> [anything...]".  The value may be a
 * decimal number, nan, inf (with sign) or gem5's "no_value" (read as NaN).
 * Lines that hold no scalar are skipped (see skippable): Ruby histograms
 * ("name | n pct cum | ...", "name [binsize: ...]"), M5-era ".start_dist"/".end_dist" markers and the
 * bucket rows between them ("  0  123  12.30%": a name that starts with a digit).
 * bad_line is the 0-based index (within block) of the first other line that is
 * not of that form, or -1.  Scanning stops at a bad line.
 *
 * Speed: consecutive dumps print the same names in the same order, so names
 * equal to prev[i] reuse that object, and when all match `prev` itself is
 * returned (callers test `names is prev`).  With `wanted`, names are looked up
 * in a C hash table first, so unwanted lines never become Python objects.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* Accept what gem5 prints and nothing looser, the same rule as the Python
 * fallback: a plain decimal number, [+-]nan, [+-]inf[inity], or no_value. */
static int parse_value(const char *tok, Py_ssize_t len, double *out)
{
    const char *body = (tok[0] == '+' || tok[0] == '-') ? tok + 1 : tok;
    Py_ssize_t blen = len - (body - tok);
    if (blen > 0 && blen <= 15) { /* fast path: plain integer, exact in a double */
        int64_t acc = 0;
        Py_ssize_t i = 0;
        for (; i < blen && body[i] >= '0' && body[i] <= '9'; i++)
            acc = acc * 10 + (body[i] - '0');
        if (i == blen) {
            *out = tok[0] == '-' ? -(double)acc : (double)acc;
            return 1;
        }
    }
    if (strcmp(tok, "no_value") == 0 || strcasecmp(body, "nan") == 0) {
        *out = NAN;
        return 1;
    }
    if (strcasecmp(body, "inf") == 0 || strcasecmp(body, "infinity") == 0) {
        *out = tok[0] == '-' ? -INFINITY : INFINITY;
        return 1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        char c = tok[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
            return 0;
    }
    char *stop;
    *out = strtod(tok, &stop);
    return stop == tok + len;
}

static int ends_with(const char *s, Py_ssize_t n, const char *suffix)
{
    Py_ssize_t k = (Py_ssize_t)strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* The same rule as _skippable in gem5_stats.py. */
static int skippable(const char *name, Py_ssize_t name_len, const char *tok, Py_ssize_t tok_len)
{
    if (name[0] >= '0' && name[0] <= '9')
        return 1;
    if (tok_len >= 1 && (tok[0] == '|' || tok[0] == '['))
        return 1;
    return ends_with(name, name_len, ".start_dist") || ends_with(name, name_len, ".end_dist");
}

/* Open-addressing set of the wanted names' UTF-8 bytes. */
typedef struct {
    const char **keys;
    Py_ssize_t *lens;
    size_t mask;
    unsigned char len_seen[256]; /* quick reject by name length (longer names: always looked up) */
} nameset;

/* Cheap hash: names share long prefixes ("system.cpu0."), so mix the length
 * with the first and last 8 bytes rather than walking every byte. */
static uint64_t hash_bytes(const char *s, Py_ssize_t n)
{
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
    } else {
        memcpy(&a, s, n);
    }
    uint64_t h = (a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL) ^ (uint64_t)n;
    return h ^ (h >> 29);
}

static int nameset_build(nameset *set, PyObject *wanted)
{
    size_t cap = 16;
    while (cap < (size_t)PySet_Size(wanted) * 4)
        cap <<= 1;
    set->mask = cap - 1;
    set->keys = calloc(cap, sizeof(char *));
    set->lens = calloc(cap, sizeof(Py_ssize_t));
    if (!set->keys || !set->lens)
        return 0;
    PyObject *it = PyObject_GetIter(wanted), *item;
    if (!it)
        return 0;
    while ((item = PyIter_Next(it))) {
        Py_ssize_t n;
        /* the UTF-8 buffer is owned by item, which `wanted` keeps alive */
        const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &n) : NULL;
        Py_DECREF(item);
        if (!s) {
            if (PyErr_Occurred()) {
                Py_DECREF(it);
                return 0;
            }
            continue;
        }
        size_t i = hash_bytes(s, n) & set->mask;
        while (set->keys[i])
            i = (i + 1) & set->mask;
        set->keys[i] = s;
        set->lens[i] = n;
        set->len_seen[n < 255 ? n : 255] = 1;
    }
    Py_DECREF(it);
    return !PyErr_Occurred();
}

static int nameset_has(const nameset *set, const char *s, Py_ssize_t n)
{
    if (!set->len_seen[n < 255 ? n : 255])
        return 0;
    size_t i = hash_bytes(s, n) & set->mask;
    while (set->keys[i]) {
        if (set->lens[i] == n && memcmp(set->keys[i], s, n) == 0)
            return 1;
        i = (i + 1) & set->mask;
    }
    return 0;
}

/* prev[i] if it spells the same name, else a new str; a new reference. */
static PyObject *name_object(PyObject *prev, Py_ssize_t i, const char *s, Py_ssize_t n)
{
    if (prev && i < PyList_GET_SIZE(prev)) {
        PyObject *old = PyList_GET_ITEM(prev, i);
        if (PyUnicode_IS_ASCII(old) && PyUnicode_GET_LENGTH(old) == n && memcmp(PyUnicode_DATA(old), s, n) == 0) {
            Py_INCREF(old);
            return old;
        }
    }
    return PyUnicode_DecodeUTF8(s, n, "replace");
}

static PyObject *scan_block(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    PyObject *wanted, *prev;
    if (!PyArg_ParseTuple(args, "y*OO", &buf, &wanted, &prev))
        return NULL;
    if ((wanted != Py_None && !PyAnySet_Check(wanted)) || (prev != Py_None && !PyList_Check(prev))) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_TypeError, "wanted must be a set or None, prev a list or None");
        return NULL;
    }
    if (prev == Py_None)
        prev = NULL;
    nameset set;
    memset(&set, 0, sizeof set);
    PyObject *names = PyList_New(0);
    Py_ssize_t cap = 1024, n = 0;
    double *vals = malloc(cap * sizeof(double));
    Py_ssize_t line_no = 0, bad_line = -1;
    int same = 1; /* every name so far equals prev[n] */
    char tmp[64];
    if (!names || !vals || (wanted != Py_None && !nameset_build(&set, wanted)))
        goto fail;

    const char *p = buf.buf, *end = p + buf.len;
    while (p < end) {
        const char *eol = memchr(p, '\n', end - p);
        if (!eol)
            eol = end;
        const char *q = p;
        while (q < eol && is_ws(*q))
            q++;
        if (q < eol) {
            const char *name = q;
            while (q < eol && !is_ws(*q))
                q++;
            Py_ssize_t name_len = q - name;
            while (q < eol && is_ws(*q))
                q++;
            const char *tok = q;
            while (q < eol && !is_ws(*q))
                q++;
            Py_ssize_t tok_len = q - tok;
            if (skippable(name, name_len, tok, tok_len)) {
                p = eol + 1;
                line_no++;
                continue;
            }
            if (tok_len == 0 || tok_len >= (Py_ssize_t)sizeof(tmp)) {
                bad_line = line_no;
                break;
            }
            /* every line's value is checked, wanted or not, so a filtered parse
             * rejects the same garbage as a full one */
            double v;
            memcpy(tmp, tok, tok_len);
            tmp[tok_len] = '\0';
            if (!parse_value(tmp, tok_len, &v)) {
                bad_line = line_no;
                break;
            }
            if (set.keys && !nameset_has(&set, name, name_len)) {
                p = eol + 1;
                line_no++;
                continue;
            }
            PyObject *key = name_object(prev, n, name, name_len);
            if (!key)
                goto fail;
            if (same && !(prev && n < PyList_GET_SIZE(prev) && PyList_GET_ITEM(prev, n) == key))
                same = 0;
            if (n == cap) {
                cap *= 2;
                double *grown = realloc(vals, cap * sizeof(double));
                if (!grown) {
                    Py_DECREF(key);
                    goto fail;
                }
                vals = grown;
            }
            vals[n++] = v;
            int rc = PyList_Append(names, key);
            Py_DECREF(key);
            if (rc < 0)
                goto fail;
        }
        p = eol + 1;
        line_no++;
    }
    PyBuffer_Release(&buf);
    free(set.keys);
    free(set.lens);
    PyObject *values = PyBytes_FromStringAndSize((const char *)vals, n * (Py_ssize_t)sizeof(double));
    free(vals);
    if (!values) {
        Py_DECREF(names);
        return NULL;
    }
    if (same && prev && n == PyList_GET_SIZE(prev)) {
        Py_DECREF(names);
        Py_INCREF(prev);
        names = prev;
    }
    return Py_BuildValue("(NNn)", names, values, bad_line);

fail:
    PyBuffer_Release(&buf);
    Py_XDECREF(names);
    free(vals);
    free(set.keys);
    free(set.lens);
    if (!PyErr_Occurred())
        PyErr_NoMemory();
    return NULL;
}

static PyMethodDef methods[] = {
    {"scan_block", scan_block, METH_VARARGS, "Scan one gem5 stats dump block."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_statscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__statscan(void) { return PyModule_Create(&module); }
