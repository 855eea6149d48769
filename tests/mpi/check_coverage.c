/*
 * coll_coverage: every collective coll/gpu stages, in every mode, on memory under test
 * (the simulated GPU's without a GPU): the blocking collectives without fast paths
 * (reduce, scan, exscan, gather(v), scatter(v), allgatherv, alltoall(v,w)), and the
 * nonblocking and persistent forms of those and of allreduce, bcast, allgather,
 * reduce_scatter(_block) -- over predefined types and ops, derived datatypes (gaps, a
 * negative lower bound) with user ops (one not commutative), counts 0/1/7/1000, in place,
 * roots other than 0, several communicators (single-rank ones included), requests
 * completed with Wait, Test loops, Waitall, Waitany, Testall, Waitsome, Testany; then
 * several requests in flight on several communicators, completed in any order
 * (check_coverage_overlap.c). Exit status 0 only when every rank passed.
 *
 * World rank 0 prints "coll_coverage: window end staged=NAME,..." with every call it made
 * on device memory with data (communicators of more than one rank), so that the suite can
 * match them with the component's verbose log.
 */
#include "check_coverage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CV_POISON 0xA5

int  tc_verbose;
long tc_tests, tc_failures;

void tc_fail(const char *what, const char *detail)
{
    tc_failures++;
    if (tc_failures <= 20) {
        fprintf(stderr, "coll_coverage: FAIL %s: %s\n", what, detail);
    } else if (tc_failures == 21) {
        fprintf(stderr, "coll_coverage: (further failures not printed)\n");
    }
}

/* ---- names of the calls made on device memory (the proof) ---------------------------- */

static char cv_staged_names[64][64];
static int  cv_num_staged_names;

static void cv_note_call(const cv_call_t *k)
{
    if (k->ctx->kind != EM_DEVICE || k->ctx->size < 2 || k->count == 0 || k->round > 0 ||
        (k->coll->fast && k->mode == CV_BLOCKING)) {
        return;
    }
    for (int i = 0; i < cv_num_staged_names; i++) {
        if (strcmp(cv_staged_names[i], cv_name(k)) == 0) {
            return;
        }
    }
    if (cv_num_staged_names < 64) {
        snprintf(cv_staged_names[cv_num_staged_names++], sizeof(cv_staged_names[0]), "%s",
                 cv_name(k));
    }
}

const char *cv_name(const cv_call_t *k)
{
    static char name[64];

    snprintf(name, sizeof(name), "%s%s%s", k->mode == CV_NONBLOCKING ? "i" : "", k->coll->name,
             k->mode == CV_PERSISTENT ? "_init" : "");
    return name;
}

/* ---- layouts and user ops ------------------------------------------------------------ */

#define CV_MAX_LAYOUTS 32
static cv_layout_t cv_layouts[CV_MAX_LAYOUTS];
static int         cv_num_layouts;

static const cv_layout_t *cv_layout_of(MPI_Datatype dt)
{
    for (int i = 0; i < cv_num_layouts; i++) {
        if (cv_layouts[i].dt == dt) {
            return &cv_layouts[i];
        }
    }
    return NULL;
}

/* The user ops on derived layouts of MPI_INT: element-wise sum, or the 2x2 matrix product
 * inout = in x inout (not commutative), arithmetic modulo 2^32. */
static void cv_user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const cv_layout_t *l = cv_layout_of(*dt);

    for (int e = 0; e < *len && l != NULL; e++) {
        char    *a = (char *)in + (ptrdiff_t)e * (ptrdiff_t)l->extent;
        char    *b = (char *)inout + (ptrdiff_t)e * (ptrdiff_t)l->extent;
        uint32_t x[4], y[4], r[4];
        for (int f = 0; f < l->nb; f++) {
            memcpy(&x[f], a + l->off[f], 4);
            memcpy(&y[f], b + l->off[f], 4);
        }
        if (l->matmul) {
            r[0] = x[0] * y[0] + x[1] * y[2];
            r[1] = x[0] * y[1] + x[1] * y[3];
            r[2] = x[2] * y[0] + x[3] * y[2];
            r[3] = x[2] * y[1] + x[3] * y[3];
        } else {
            for (int f = 0; f < l->nb; f++) {
                r[f] = x[f] + y[f];
            }
        }
        for (int f = 0; f < l->nb; f++) {
            memcpy(b + l->off[f], &r[f], 4);
        }
    }
}

/* A layout of base type t: plain (t itself), vector (2 of t with a hole of one between),
 * neg_lb (t at -extent and +extent: a negative true lower bound, a hole at 0), matrix
 * (4 ints, with the matrix product). */
const cv_layout_t *cv_layout(const char *kind, const tc_type_t *t)
{
    const ptrdiff_t e = (ptrdiff_t)t->extent;
    cv_layout_t     l = {.name = kind, .base = t->dt, .nb = 1, .extent = t->extent, .hi = e};

    for (int i = 0; i < cv_num_layouts; i++) {
        if (strcmp(cv_layouts[i].name, kind) == 0 && cv_layouts[i].base == t->dt) {
            return &cv_layouts[i];
        }
    }
    if (strcmp(kind, "plain") == 0) {
        l.dt = t->dt;
    } else if (strcmp(kind, "vector") == 0) {
        MPI_Type_vector(2, 1, 2, t->dt, &l.dt);
        l.nb = 2, l.off[1] = 2 * e, l.extent = 3 * t->extent, l.hi = 3 * e;
    } else if (strcmp(kind, "neg_lb") == 0) {
        int          lens[2]  = {1, 1};
        MPI_Aint     disps[2] = {-e, e};
        MPI_Datatype types[2] = {t->dt, t->dt};
        MPI_Type_create_struct(2, lens, disps, types, &l.dt);
        l.nb = 2, l.off[0] = -e, l.off[1] = e, l.extent = 3 * t->extent, l.lo = -e, l.hi = 2 * e;
    } else { /* matrix */
        MPI_Type_contiguous(4, MPI_INT, &l.dt);
        l.nb = 4, l.matmul = 1, l.extent = 16, l.hi = 16;
        for (int f = 0; f < 4; f++) {
            l.off[f] = 4 * f;
        }
    }
    if (strcmp(kind, "plain") != 0) {
        MPI_Type_commit(&l.dt);
    }
    if (cv_num_layouts == CV_MAX_LAYOUTS) {
        fprintf(stderr, "coll_coverage: too many layouts\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    cv_layouts[cv_num_layouts] = l;
    return &cv_layouts[cv_num_layouts++];
}

/* ---- buffers and expectations -------------------------------------------------------- */

static uint64_t cv_seed(const cv_call_t *k)
{
    return k->seed + (uint64_t)k->round * 0x632be59bd9b4e019ull;
}

void cv_buf_alloc(cv_call_t *k, cv_buf_t *b, size_t elements)
{
    const cv_layout_t *l     = k->lay;
    const size_t       shift = (size_t)(-l->lo);
    const size_t       size  = elements ? shift + (elements - 1) * l->extent + (size_t)l->hi : 1;

    if (b->dev != NULL && b->size != size) {
        fprintf(stderr, "coll_coverage: a persistent call's buffer changed size\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (b->dev == NULL) {
        b->init  = malloc(size);
        b->want  = malloc(size);
        b->check = malloc(size);
        b->dev   = em_alloc(size, k->ctx->kind);
        b->size  = size;
        b->shift = elements ? shift : 0;
    }
    memset(b->init, CV_POISON, size);
    memset(b->want, CV_POISON, size);
    memset(b->check, CV_HOLE, size);
    b->exact = (b == &k->send);
}

void *cv_ptr(const cv_buf_t *b)
{
    return b->dev != NULL ? (char *)b->dev + b->shift : NULL;
}

static void cv_buf_free(cv_call_t *k, cv_buf_t *b)
{
    if (b->dev != NULL) {
        em_free(b->dev, k->ctx->kind);
        free(b->init), free(b->want), free(b->check);
    }
    memset(b, 0, sizeof(*b));
}

/* Byte offset of base element f of element pos. */
static size_t cv_at(const cv_call_t *k, const cv_buf_t *b, size_t pos, int f)
{
    return (size_t)((ptrdiff_t)b->shift + (ptrdiff_t)(pos * k->lay->extent) + k->lay->off[f]);
}

static void cv_gen(const cv_call_t *k, int rank, size_t idx, int f, void *dst)
{
    tc_gen(k->type, k->op, cv_seed(k), rank, idx * (size_t)k->lay->nb + (size_t)f, dst);
}

static void cv_mark(const cv_call_t *k, cv_buf_t *b, size_t at, int what)
{
    b->check[at] = (char)what;
    memset(b->check + at + 1, CV_SKIP, k->type->extent - 1);
}

void cv_input(cv_call_t *k, cv_buf_t *b, size_t pos, int rank, size_t idx)
{
    for (int f = 0; f < k->lay->nb; f++) {
        cv_gen(k, rank, idx, f, b->init + cv_at(k, b, pos, f));
    }
}

void cv_expect(cv_call_t *k, cv_buf_t *b, size_t pos, int rank, size_t idx)
{
    for (int f = 0; f < k->lay->nb; f++) {
        cv_gen(k, rank, idx, f, b->want + cv_at(k, b, pos, f));
        cv_mark(k, b, cv_at(k, b, pos, f), CV_ELEM);
    }
}

void cv_expect_any(cv_call_t *k, cv_buf_t *b, size_t pos)
{
    for (int f = 0; f < k->lay->nb; f++) {
        cv_mark(k, b, cv_at(k, b, pos, f), CV_SKIP);
    }
}

void cv_expect_reduced(cv_call_t *k, cv_buf_t *b, size_t pos, int lo, int hi, size_t idx)
{
    char acc[4][64], x[64];

    for (int f = 0; f < k->lay->nb; f++) {
        cv_gen(k, lo, idx, f, acc[f]);
    }
    for (int r = lo + 1; r <= hi; r++) {
        if (k->lay->matmul) { /* acc = acc x x_r */
            uint32_t a[4], y[4];
            for (int f = 0; f < 4; f++) {
                memcpy(&a[f], acc[f], 4);
                cv_gen(k, r, idx, f, x);
                memcpy(&y[f], x, 4);
            }
            uint32_t p[4] = {a[0] * y[0] + a[1] * y[2], a[0] * y[1] + a[1] * y[3],
                             a[2] * y[0] + a[3] * y[2], a[2] * y[1] + a[3] * y[3]};
            for (int f = 0; f < 4; f++) {
                memcpy(acc[f], &p[f], 4);
            }
            continue;
        }
        for (int f = 0; f < k->lay->nb; f++) {
            cv_gen(k, r, idx, f, x);
            tc_combine(k->type, k->op, acc[f], x);
        }
    }
    for (int f = 0; f < k->lay->nb; f++) {
        memcpy(b->want + cv_at(k, b, pos, f), acc[f], k->type->extent);
        cv_mark(k, b, cv_at(k, b, pos, f), CV_ELEM);
    }
}

int cv_vcount(const cv_call_t *k, int rank)
{
    long v = (long)k->count + rank % 3 - 1;
    return k->count == 0 || v < 0 ? 0 : (int)v;
}

size_t cv_vdispls(const int *counts, int *displs, int n)
{
    size_t at = 0;

    for (int r = n - 1; r >= 0; r--) {
        displs[r] = (int)at;
        at += (size_t)counts[r] + 1;
    }
    return at;
}

/* ---- one call ------------------------------------------------------------------------- */

static void cv_report(const cv_call_t *k, const char *what)
{
    char detail[512];

    snprintf(detail, sizeof(detail), "%s %s/%s op=%s count=%zu %s root=%d comm=%s rank=%d "
             "round=%d completion=%d: %s", cv_name(k), k->type->name, k->lay->name,
             k->lay->matmul ? "matmul" : k->op >= 0 ? tc_ops[k->op].name : "-", k->count,
             k->in_place ? "in-place" : "out-of-place", k->root, k->ctx->comm_name,
             k->ctx->rank, k->round, k->completion, what);
    tc_fail(cv_name(k), detail);
}

void cv_check_rc(cv_call_t *k, const char *what, int rc)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING], detail[MPI_MAX_ERROR_STRING + 64];
        int  len = 0;
        MPI_Error_string(rc, msg, &len);
        snprintf(detail, sizeof(detail), "%s returned %s", what, msg);
        cv_report(k, detail);
    }
}

void cv_prepare(cv_call_t *k)
{
    const int n = k->ctx->size;

    if (k->rcounts == NULL) {
        k->scounts = calloc((size_t)n, sizeof(int)), k->sdispls = calloc((size_t)n, sizeof(int));
        k->rcounts = calloc((size_t)n, sizeof(int)), k->rdispls = calloc((size_t)n, sizeof(int));
        k->stypes  = calloc((size_t)n, sizeof(MPI_Datatype));
        k->rtypes  = calloc((size_t)n, sizeof(MPI_Datatype));
        k->req     = MPI_REQUEST_NULL;
    }
    k->sarg = k->rarg = NULL;
    k->coll->prepare(k);
    if (k->send.dev != NULL) {
        em_to_dev(k->send.dev, k->send.init, k->send.size, k->ctx->kind);
    }
    if (k->recv.dev != NULL) {
        em_to_dev(k->recv.dev, k->recv.init, k->recv.size, k->ctx->kind);
    }
}

int cv_issue(cv_call_t *k)
{
    int rc = MPI_SUCCESS;

    if (k->mode != CV_PERSISTENT || k->round == 0) {
        rc = k->coll->call(k);
        cv_note_call(k);
    }
    if (rc == MPI_SUCCESS && k->mode == CV_PERSISTENT) {
        rc = MPI_Start(&k->req);
    }
    return rc;
}

/* Complete one request in one of several ways (MPI_Wait, Test loops, the array forms). */
static int cv_complete(int how, MPI_Request *req)
{
    int flag = 0, index, count, rc = MPI_SUCCESS;

    switch (how % 7) {
    case 0: return MPI_Wait(req, MPI_STATUS_IGNORE);
    case 1:
        while (rc == MPI_SUCCESS && !flag) {
            rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        }
        return rc;
    case 2: return MPI_Waitall(1, req, MPI_STATUSES_IGNORE);
    case 3: return MPI_Waitany(1, req, &index, MPI_STATUS_IGNORE);
    case 4:
        while (rc == MPI_SUCCESS && !flag) {
            rc = MPI_Testall(1, req, &flag, MPI_STATUSES_IGNORE);
        }
        return rc;
    case 5: return MPI_Waitsome(1, req, &count, &index, MPI_STATUSES_IGNORE);
    default:
        while (rc == MPI_SUCCESS && !flag) {
            rc = MPI_Testany(1, req, &index, &flag, MPI_STATUS_IGNORE);
        }
        return rc;
    }
}

static void cv_verify_buf(cv_call_t *k, cv_buf_t *b, const char *which)
{
    char  *got = malloc(b->size), what[160];
    size_t bad = 0;

    em_to_host(got, b->dev, b->size, k->ctx->kind);
    if (b->exact) {
        if (memcmp(got, b->init, b->size) != 0) {
            snprintf(what, sizeof(what), "%s buffer modified", which);
            cv_report(k, what);
        }
        free(got);
        return;
    }
    for (size_t i = 0; i < b->size; i++) {
        int wrong = (b->check[i] == CV_ELEM && tc_compare(k->type, got + i, b->want + i) != 0) ||
                    (b->check[i] == CV_HOLE && (unsigned char)got[i] != CV_POISON);
        if (wrong && bad++ == 0) {
            char g[96] = "", w[96] = "";
            if (b->check[i] == CV_ELEM) {
                tc_format(k->type, got + i, g, sizeof(g));
                tc_format(k->type, b->want + i, w, sizeof(w));
                snprintf(what, sizeof(what), "%s buffer: wrong element at byte %zu (got %s, want %s)",
                         which, i, g, w);
            } else {
                snprintf(what, sizeof(what), "%s buffer: byte %zu outside the data changed (0x%02x)",
                         which, i, (unsigned char)got[i]);
            }
            cv_report(k, what);
        }
    }
    free(got);
}

void cv_verify(cv_call_t *k)
{
    if (k->send.dev != NULL) {
        cv_verify_buf(k, &k->send, "send");
    }
    if (k->recv.dev != NULL) {
        cv_verify_buf(k, &k->recv, "receive");
    }
    tc_tests++;
}

void cv_release(cv_call_t *k)
{
    if (k->mode == CV_PERSISTENT && k->req != MPI_REQUEST_NULL) {
        cv_check_rc(k, "MPI_Request_free", MPI_Request_free(&k->req));
    }
    cv_buf_free(k, &k->send);
    cv_buf_free(k, &k->recv);
    free(k->scounts), free(k->sdispls), free(k->rcounts), free(k->rdispls);
    free(k->stypes), free(k->rtypes);
    k->scounts = k->sdispls = k->rcounts = k->rdispls = NULL;
    k->stypes = k->rtypes = NULL;
}

void cv_run(cv_call_t *k)
{
    const int rounds = k->mode == CV_PERSISTENT ? 2 : 1;

    for (k->round = 0; k->round < rounds; k->round++) {
        int rc;
        cv_prepare(k);
        rc = cv_issue(k);
        cv_check_rc(k, k->mode == CV_BLOCKING ? "the call" : "the start", rc);
        if (rc == MPI_SUCCESS && k->mode != CV_BLOCKING) {
            cv_check_rc(k, "the completion", cv_complete(k->completion + k->round, &k->req));
        }
        cv_verify(k);
    }
    cv_release(k);
}

/* ---- the matrix ----------------------------------------------------------------------- */

typedef struct {
    const char *type, *layout, *op; /* op NULL: no reduction; "user": the layout's user op */
} cv_variant_t;

/* Reductions: predefined types and ops (padded pairs, complex, long double, bool
 * included); derived layouts with user ops. Data movement: plain and derived types. */
static const cv_variant_t cv_reduction_variants[] = {
    {"MPI_INT", "plain", "MPI_SUM"},         {"MPI_INT", "plain", "MPI_MAX"},
    {"MPI_INT", "plain", "MPI_BXOR"},        {"MPI_DOUBLE", "plain", "MPI_SUM"},
    {"MPI_UINT8_T", "plain", "MPI_SUM"},     {"MPI_FLOAT_INT", "plain", "MPI_MINLOC"},
    {"MPI_DOUBLE_INT", "plain", "MPI_MAXLOC"}, {"MPI_C_DOUBLE_COMPLEX", "plain", "MPI_PROD"},
    {"MPI_LONG_DOUBLE", "plain", "MPI_MIN"}, {"MPI_C_BOOL", "plain", "MPI_LXOR"},
    {"MPI_INT", "vector", "user"},           {"MPI_INT", "neg_lb", "user"},
    {"MPI_INT", "matrix", "user"},
};
static const cv_variant_t cv_data_variants[] = {
    {"MPI_CHAR", "plain", NULL},       {"MPI_INT", "plain", NULL},
    {"MPI_DOUBLE_INT", "plain", NULL}, {"MPI_C_DOUBLE_COMPLEX", "plain", NULL},
    {"MPI_DOUBLE", "vector", NULL},    {"MPI_SHORT_INT", "neg_lb", NULL},
};
#define CV_NVAR(a) ((int)(sizeof(a) / sizeof(a[0])))

typedef struct {
    char   colls[512];
    char   modes[64];
    size_t counts[8];
    int    ncounts;
    int    all_variants; /* every variant (world); otherwise the first two and one derived */
    int    overlap;
} cv_options_t;

static int cv_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n) {
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) {
            return 1;
        }
    }
    return strcmp(list, "all") == 0;
}

static MPI_Op cv_user_sum, cv_user_matmul;

static void cv_run_matrix(tc_ctx_t *ctx, const cv_options_t *o, int all_variants, uint64_t *seed)
{
    static const char *const mode_names[] = {"blocking", "nonblocking", "persistent"};
    long                     n = 0;

    for (int c = 0; c < cv_num_colls; c++) {
        const cv_coll_t    *coll = &cv_colls[c];
        const cv_variant_t *vars = coll->reduces ? cv_reduction_variants : cv_data_variants;
        const int           nvar = coll->reduces ? CV_NVAR(cv_reduction_variants)
                                                 : CV_NVAR(cv_data_variants);
        if (!cv_listed(o->colls, coll->name)) {
            continue;
        }
        for (int mode = 0; mode < CV_NUM_MODES; mode++) {
            if ((mode == CV_BLOCKING && coll->fast) || !cv_listed(o->modes, mode_names[mode])) {
                continue; /* blocking with fast paths: coll_check */
            }
            for (int v = 0; v < nvar; v++) {
                const tc_type_t *t = tc_type_by_name(vars[v].type);
                if (!all_variants && v >= 2 && v != nvar - 1) {
                    continue;
                }
                for (int ci = 0; ci < o->ncounts; ci++) {
                    for (int ip = 0; ip < (coll->in_place ? 2 : 1); ip++, n++) {
                        cv_call_t k = {.ctx = ctx, .coll = coll, .type = t,
                                       .lay = cv_layout(vars[v].layout, t),
                                       .op = -1, .count = o->counts[ci], .in_place = ip,
                                       .mode = (cv_mode_t)mode, .completion = (int)(n % 7),
                                       .null_ignored = (int)(n % 2)};
                        if (vars[v].op != NULL && strcmp(vars[v].op, "user") == 0) {
                            k.op     = k.lay->matmul ? tc_op_by_name("MPI_PROD")
                                                     : tc_op_by_name("MPI_SUM");
                            k.mpi_op = k.lay->matmul ? cv_user_matmul : cv_user_sum;
                        } else if (vars[v].op != NULL) {
                            k.op     = tc_op_by_name(vars[v].op);
                            k.mpi_op = tc_ops[k.op].op;
                        }
                        k.root = !coll->rooted ? 0 : (n % 3 == 0) ? 0 : (n % 3 == 1)
                                 ? ctx->size - 1 : ctx->size / 2;
                        k.seed = ++*seed * 0x9e3779b97f4a7c15ull;
                        cv_run(&k);
                    }
                }
            }
        }
    }
}

static int cv_parse(int argc, char **argv, cv_options_t *o, const char **mem)
{
    const char *counts = "0,1,7,1000";

    *o = (cv_options_t){.all_variants = 1, .overlap = 1};
    snprintf(o->colls, sizeof(o->colls), "all");
    snprintf(o->modes, sizeof(o->modes), "all");
    *mem = "auto";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
#define CV_OPT(name) (strcmp(a, name) == 0 && v != NULL && ++i)
        if (CV_OPT("--mem")) *mem = v;
        else if (CV_OPT("--counts")) counts = v;
        else if (CV_OPT("--colls")) snprintf(o->colls, sizeof(o->colls), "%s", v);
        else if (CV_OPT("--modes")) snprintf(o->modes, sizeof(o->modes), "%s", v);
        else if (strcmp(a, "--no-overlap") == 0) o->overlap = 0;
        else if (strcmp(a, "--verbose") == 0) tc_verbose = 1;
        else {
            fprintf(stderr, "usage: coll_coverage [--mem auto|device|pool|host|mixed] "
                            "[--counts LIST] [--colls LIST] [--modes blocking,nonblocking,"
                            "persistent] [--no-overlap] [--verbose]\n");
            return 1;
        }
#undef CV_OPT
    }
    for (const char *p = counts; *p != '\0' && o->ncounts < 8; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        o->counts[o->ncounts++] = (size_t)strtoull(p, NULL, 10);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const comm_names[] = {"world", "reversed", "odd", "self", "halves"};
    cv_options_t o;
    const char  *mem;
    MPI_Comm     comms[5], dup;
    int          wrank, wsize;
    uint64_t     seed = 20261123;
    long         totals[2], sums[2];
    double       t0;
    em_kind_t    kind;
    tc_ctx_t     ctxs[5];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (cv_parse(argc, argv, &o, &mem) != 0) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    kind = em_init(strcmp(mem, "mixed") == 0 ? "auto" : mem, em_local_rank(wrank));
    if (strcmp(mem, "mixed") == 0 && (wrank % 2) == 1) {
        kind = EM_HOST; /* odd ranks pass host memory, even ranks device memory */
    }
    MPI_Op_create(cv_user_fn, 1, &cv_user_sum);
    MPI_Op_create(cv_user_fn, 0, &cv_user_matmul);
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, (wrank == wsize - 1 && wsize > 1) ? MPI_UNDEFINED : 0, wrank,
                   &comms[2]);
    comms[3] = MPI_COMM_SELF;
    MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2, wrank, &comms[4]);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (wrank == 0) {
        printf("coll_coverage: %d ranks, %s%s\n", wsize, em_describe(),
               strcmp(mem, "mixed") == 0 ? " (odd ranks: host memory)" : "");
        fflush(stdout);
    }
    t0 = MPI_Wtime();
    for (int c = 0; c < 5; c++) {
        tc_ctx_t *ctx = &ctxs[c];
        *ctx = (tc_ctx_t){comms[c], comm_names[c], 0, 0, kind};
        if (comms[c] == MPI_COMM_NULL) {
            continue;
        }
        MPI_Comm_rank(comms[c], &ctx->rank);
        MPI_Comm_size(comms[c], &ctx->size);
        cv_run_matrix(ctx, &o, o.all_variants && c == 0, &seed);
        if (wrank == 0 && tc_verbose) {
            printf("coll_coverage: %s done, %ld tests, %.1f s\n", comm_names[c], tc_tests,
                   MPI_Wtime() - t0);
            fflush(stdout);
        }
    }
    if (o.overlap) {
        tc_ctx_t dctx = {dup, "dup", wrank, wsize, kind};
        cv_run_overlap(&ctxs[0], &dctx, &ctxs[1], ++seed);
    }
    if (wrank == 0) {
        fprintf(stderr, "coll_coverage: window end staged=");
        for (int i = 0; i < cv_num_staged_names; i++) {
            fprintf(stderr, "%s%s", i ? "," : "", cv_staged_names[i]);
        }
        fprintf(stderr, "\n");
        fflush(stderr);
    }
    totals[0] = tc_tests;
    totals[1] = tc_failures;
    MPI_Allreduce(totals, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("coll_coverage: %s: %ld checks on %d ranks, %ld failures, %.1f s\n",
               sums[1] ? "FAILED" : "PASSED", sums[0], wsize, sums[1], MPI_Wtime() - t0);
    }
    for (int i = 0; i < cv_num_layouts; i++) {
        if (strcmp(cv_layouts[i].name, "plain") != 0) {
            MPI_Type_free(&cv_layouts[i].dt);
        }
    }
    MPI_Op_free(&cv_user_sum);
    MPI_Op_free(&cv_user_matmul);
    MPI_Comm_free(&dup);
    for (int c = 1; c < 5; c++) {
        if (comms[c] != MPI_COMM_NULL && comms[c] != MPI_COMM_SELF) {
            MPI_Comm_free(&comms[c]);
        }
    }
    MPI_Finalize();
    return sums[1] ? 1 : 0;
}
