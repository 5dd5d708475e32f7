/* Line scanner for one gem5 stats.txt dump block.
 *
 * Pure-Python tokenising tops out well below a million lines per second on a
 * small machine, so the hot loop lives here.  cosim/readers/gem5_stats.py has
 * an equivalent pure-Python twin (_statscan_py.py); tests check both agree.
 *
 * scan_block(buf: bytes-like, wanted: set[str] | None, prev: list[str] | None, start: int = 0, end: int = len(buf))
 *   -> (names: list[str], values: bytes (float64 array), bad_line: int, stop: int)
 *
 * Lines are read from offset `start` (a line start) up to the first line that
 * begins with gem5's Begin or End marker; `stop` is that line's offset, or -1
 * when the buffer (its first `end` bytes) ended first.  A last line with no newline is not read (the
 * rest of it is still to come), unless it is a marker.  So one pass both splits
 * the file into dumps and tokenises them.
 *
 * Each non-blank line is "<name> <value> [anything...]".  The value may be a
 * decimal number, nan, inf (with sign), gem5's "no_value" or M5's "<err: ...>" (read as NaN).
 * Lines that hold no scalar are skipped: Ruby histograms ("name | n pct cum | ...", "name [binsize: ...]"),
 * M5-era ".start_dist"/".end_dist" markers, and outside a distribution a row whose name starts with a digit.
 * A row between "<dist>.start_dist" and "<dist>.end_dist" is the distribution's own stat (<dist>.samples)
 * or a bucket ("  IntAlu  16051  64.2%", "  0  123  12.30%"), read as <dist>::IntAlu, <dist>::0.
 * bad_line is the 0-based index (counted from `start`) of the first other line
 * that is not of that form, or -1.  Scanning stops at a bad line (stop is -1).
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

/* End of the token starting at q: the first ' ', '\t' or '\r' before eol.  Stat names
 * are long (60-90 bytes), so vectorised memchr beats a byte loop several times over. */
static const char *token_end(const char *q, const char *eol)
{
    const char *end = memchr(q, ' ', eol - q);
    if (!end)
        end = eol;
    const char *tab = memchr(q, '\t', end - q);
    if (tab)
        end = tab;
    const char *cr = memchr(q, '\r', end - q);
    return cr ? cr : end;
}

/* 10^0 .. 10^22: every one is exact in a double. */
static const double exact_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Is tok[0..len) a decimal number "[+-]d*[.d*][(e|E)[+-]d+]" with at least one digit
 * before the exponent?  That is what strtod accepts once hex, inf and nan are set apart. */
static int is_decimal(const char *tok, Py_ssize_t len)
{
    Py_ssize_t i = (len > 0 && (tok[0] == '+' || tok[0] == '-')) ? 1 : 0, digits = 0;
    for (; i < len && tok[i] >= '0' && tok[i] <= '9'; i++)
        digits++;
    if (i < len && tok[i] == '.')
        for (i++; i < len && tok[i] >= '0' && tok[i] <= '9'; i++)
            digits++;
    if (!digits)
        return 0;
    if (i < len && (tok[i] == 'e' || tok[i] == 'E')) {
        i++;
        if (i < len && (tok[i] == '+' || tok[i] == '-'))
            i++;
        Py_ssize_t exp_digits = 0;
        for (; i < len && tok[i] >= '0' && tok[i] <= '9'; i++)
            exp_digits++;
        if (!exp_digits)
            return 0;
    }
    return i == len;
}

static int is_special(const char *tok, double *out)
{
    const char *body = (tok[0] == '+' || tok[0] == '-') ? tok + 1 : tok;
    /* M5 printed a failed formula as "<err: div-0>": no value, like gem5's no_value */
    if (strcmp(tok, "no_value") == 0 || strcasecmp(body, "nan") == 0 || strncmp(tok, "<err:", 5) == 0) {
        *out = NAN;
        return 1;
    }
    if (strcasecmp(body, "inf") == 0 || strcasecmp(body, "infinity") == 0) {
        *out = tok[0] == '-' ? -INFINITY : INFINITY;
        return 1;
    }
    return 0;
}

/* Accept what gem5 prints and nothing looser, the same rule as the Python
 * fallback: a plain decimal number, [+-]nan, [+-]inf[inity], no_value, or M5's <err: ...>.
 * tok is NUL-terminated.  With out == NULL the token is only checked. */
static int parse_value(const char *tok, Py_ssize_t len, double *out)
{
    if (!is_decimal(tok, len)) {
        double special;
        if (!is_special(tok, &special))
            return 0;
        if (out)
            *out = special;
        return 1;
    }
    if (!out)
        return 1;
    /* Fast path: "[+-]digits[.digits]" with at most 15 digits is an exact integer over an
     * exact power of ten, so one IEEE division rounds it exactly as strtod would. */
    const char *body = (tok[0] == '+' || tok[0] == '-') ? tok + 1 : tok;
    int64_t acc = 0;
    int digits = 0, frac = -1;
    const char *c = body;
    for (; c < tok + len; c++) {
        if (*c == '.' && frac < 0) {
            frac = 0;
        } else if (*c >= '0' && *c <= '9' && digits < 15) {
            acc = acc * 10 + (*c - '0');
            digits++;
            if (frac >= 0)
                frac++;
        } else {
            break;
        }
    }
    if (c == tok + len) {
        double v = frac > 0 ? (double)acc / exact_pow10[frac] : (double)acc;
        *out = tok[0] == '-' ? -v : v;
        return 1;
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

/* The same rule as _skippable in _statscan_py.py: outside an M5 distribution, a row whose name starts with a
 * digit holds no stat (Ruby histograms are skipped everywhere). */
static int skippable(const char *name, Py_ssize_t name_len, const char *tok, Py_ssize_t tok_len)
{
    (void)name_len;
    (void)tok;
    (void)tok_len;
    return name[0] >= '0' && name[0] <= '9';
}

static int is_histogram(const char *tok, Py_ssize_t tok_len) { return tok_len >= 1 && (tok[0] == '|' || tok[0] == '['); }

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

static const char BEGIN_MARKER[] = "---------- Begin Simulation Statistics";
static const char END_MARKER[] = "---------- End Simulation Statistics";

static int starts_with(const char *p, const char *end, const char *prefix, Py_ssize_t n)
{
    return end - p >= n && memcmp(p, prefix, n) == 0;
}

static int is_marker(const char *p, const char *end)
{
    return p[0] == '-' && (starts_with(p, end, BEGIN_MARKER, sizeof BEGIN_MARKER - 1) ||
                           starts_with(p, end, END_MARKER, sizeof END_MARKER - 1));
}

static PyObject *scan_block(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    PyObject *wanted, *prev;
    Py_ssize_t start = 0, stop = -1, limit = -1;
    if (!PyArg_ParseTuple(args, "y*OO|nn", &buf, &wanted, &prev, &start, &limit))
        return NULL;
    if (limit < 0)
        limit = buf.len;
    if ((wanted != Py_None && !PyAnySet_Check(wanted)) || (prev != Py_None && !PyList_Check(prev))) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_TypeError, "wanted must be a set or None, prev a list or None");
        return NULL;
    }
    if (start < 0 || start > limit || limit > buf.len) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "start or end is outside the buffer");
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
    const char *dist = NULL; /* inside an M5 distribution: its name (dist_len bytes, in buf) */
    Py_ssize_t dist_len = 0, composed_cap = 0;
    char *composed = NULL; /* a bucket's name, <dist>::<bucket> */
    if (!names || !vals || (wanted != Py_None && !nameset_build(&set, wanted)))
        goto fail;

    const char *p = (const char *)buf.buf + start, *end = (const char *)buf.buf + limit;
    while (p < end) {
        if (is_marker(p, end)) {
            stop = p - (const char *)buf.buf;
            break;
        }
        const char *eol = memchr(p, '\n', end - p);
        if (!eol)
            break; /* an unfinished last line: the rest is in the next read */
        const char *q = p;
        while (q < eol && is_ws(*q))
            q++;
        if (q < eol) {
            const char *name = q;
            q = token_end(q, eol);
            Py_ssize_t name_len = q - name;
            while (q < eol && is_ws(*q))
                q++;
            const char *tok = q;
            while (q < eol && !is_ws(*q))
                q++;
            Py_ssize_t tok_len = q - tok;
            /* M5-era distributions: rows between "<dist>.start_dist" and "<dist>.end_dist" are its own
             * stats (<dist>.samples) or buckets, named <dist>::<bucket> (the same rule as bucket_name) */
            int marker = ends_with(name, name_len, ".start_dist") ? 1 : ends_with(name, name_len, ".end_dist") ? 2 : 0;
            if (marker == 1) {
                dist = name;
                dist_len = name_len - (Py_ssize_t)strlen(".start_dist");
            } else if (marker == 2) {
                dist = NULL;
            }
            if (marker || is_histogram(tok, tok_len) || (!dist && skippable(name, name_len, tok, tok_len))) {
                p = eol + 1;
                line_no++;
                continue;
            }
            if (dist && !(name_len > dist_len && memcmp(name, dist, dist_len) == 0 && name[dist_len] == '.')) {
                Py_ssize_t need = dist_len + 2 + name_len;
                if (need > composed_cap) {
                    char *grown = realloc(composed, need);
                    if (!grown)
                        goto fail;
                    composed = grown;
                    composed_cap = need;
                }
                memcpy(composed, dist, dist_len);
                memcpy(composed + dist_len, "::", 2);
                memcpy(composed + dist_len + 2, name, name_len);
                name = composed;
                name_len = need;
            }
            if (tok_len == 0 || tok_len >= (Py_ssize_t)sizeof(tmp)) {
                bad_line = line_no;
                break;
            }
            /* every line's value is checked, wanted or not, so a filtered parse
             * rejects the same garbage as a full one; only wanted values are converted */
            int keep = !set.keys || nameset_has(&set, name, name_len);
            double v;
            memcpy(tmp, tok, tok_len);
            tmp[tok_len] = '\0';
            if (!parse_value(tmp, tok_len, keep ? &v : NULL)) {
                bad_line = line_no;
                break;
            }
            if (!keep) {
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
    free(composed);
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
    return Py_BuildValue("(NNnn)", names, values, bad_line, stop);

fail:
    PyBuffer_Release(&buf);
    Py_XDECREF(names);
    free(vals);
    free(composed);
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

/* The contract's version: 2 reads M5-era distribution rows as <dist>::<bucket>.  gem5_stats.py uses a build
 * whose CONTRACT differs from its own (one built from older source) as if none were built. */
PyMODINIT_FUNC PyInit__statscan(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "CONTRACT", 2) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
