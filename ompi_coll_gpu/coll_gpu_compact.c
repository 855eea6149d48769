/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Compact staging of a layout whose pieces lie far apart. A type over several allocations,
 * given with MPI_BOTTOM (absolute addresses), spans the distance between them: terabytes
 * where one lies on the heap and one among the mappings. Staged as it lies, its arena would
 * need that much address space, which the process may not have. Instead its pieces are
 * staged close together, and the layer underneath gets, in place of the application's
 * type, an equivalent one: the same count, the same type signature, the same blocks of the
 * same subtypes, at displacements that point into the compact copy.
 *
 * The type is taken apart into blocks from its outermost constructor (under any dup or
 * resized); a block that is itself mostly gaps (a contiguous run of such elements, a
 * struct member that spans the allocations) is taken apart in turn, element by element,
 * MCA_COLL_GPU_COMPACT_DEPTH levels at most. The blocks keep their subtypes and move as
 * wholes, in clusters of blocks closer than MCA_COLL_GPU_COMPACT_NEAR; the compact type is
 * a struct of them in type-map order. Element i of it lies i extents of it from the
 * buffer pointer, as element i of the application's type lies i of its extents from its
 * pointer (where elements interleave too: each has its own compact copy). Layouts this
 * cannot describe (no blocks to take apart: subarray, darray; a negative extent; over
 * MCA_COLL_GPU_COMPACT_MAX_BLOCKS blocks) are staged as they lie.
 */
#include "ompi_coll_gpu/coll_gpu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MCA_COLL_GPU_COMPACT_NEAR       ((ptrdiff_t)1 << 20) /* closer blocks: one cluster */
#define MCA_COLL_GPU_COMPACT_MAX_BLOCKS 4096
#define MCA_COLL_GPU_COMPACT_DEPTH      4 /* levels of blocks taken apart below the outermost */
#define MCA_COLL_GPU_COMPACT_ALIGN      64 /* a cluster keeps its address modulo this */

/* One block: blen elements of type at disp bytes. */
typedef struct {
    ptrdiff_t               disp;
    int                     blen;
    struct ompi_datatype_t *type;
    ptrdiff_t               lo, hi; /* the bytes it touches (lo == hi: none) */
    size_t                  cluster;
} mca_coll_gpu_block_t;

typedef struct {
    mca_coll_gpu_block_t    *blocks;
    int                      nblocks, blocks_max;
    struct ompi_datatype_t **held; /* derived types get_contents returned: to free */
    int                      nheld, held_max;
} mca_coll_gpu_blocks_t;

/* Its constructor's arguments are kept: MPI_Type_get_envelope and _contents would fail,
 * through the error handler, on a type another component built without them. */
static int mca_coll_gpu_has_args(struct ompi_datatype_t *type)
{
    return !ompi_datatype_is_predefined(type) && type->args != NULL;
}

/* A type get_contents returned: a derived one is a new handle, freed when done. */
static int mca_coll_gpu_blocks_hold(mca_coll_gpu_blocks_t *list, struct ompi_datatype_t *type)
{
    if (ompi_datatype_is_predefined(type)) {
        return OMPI_SUCCESS;
    }
    if (list->nheld == list->held_max) {
        int                      held_max = list->held_max ? 2 * list->held_max : 8;
        struct ompi_datatype_t **grown = realloc(list->held, (size_t)held_max * sizeof(*grown));
        if (grown == NULL) {
            MPI_Datatype lost = type;
            (void)PMPI_Type_free(&lost);
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        list->held     = grown;
        list->held_max = held_max;
    }
    list->held[list->nheld++] = type;
    return OMPI_SUCCESS;
}

static void mca_coll_gpu_blocks_free(mca_coll_gpu_blocks_t *list)
{
    for (int i = 0; i < list->nheld; i++) {
        MPI_Datatype type = list->held[i];
        (void)PMPI_Type_free(&type);
    }
    free(list->held);
    free(list->blocks);
    memset(list, 0, sizeof(*list));
}

/* block's bytes: [lo, hi), none where it holds no data. */
static void mca_coll_gpu_block_bounds(mca_coll_gpu_block_t *block)
{
    ptrdiff_t lb, extent, true_lb, true_extent, repeat;
    size_t    size = 0;

    ompi_datatype_type_size(block->type, &size);
    block->lo = block->hi = 0;
    if (block->blen == 0 || size == 0) {
        return; /* no data: displacement 0 in the compact type */
    }
    ompi_datatype_get_extent(block->type, &lb, &extent);
    ompi_datatype_get_true_extent(block->type, &true_lb, &true_extent);
    repeat    = (ptrdiff_t)(block->blen - 1) * extent;
    block->lo = block->disp + true_lb + (repeat < 0 ? repeat : 0);
    block->hi = block->disp + true_lb + true_extent + (repeat > 0 ? repeat : 0);
}

/* Mostly gaps (its data far apart): its type's own blocks are taken in its place. */
static int mca_coll_gpu_block_sparse(const mca_coll_gpu_block_t *block)
{
    size_t size = 0;

    ompi_datatype_type_size(block->type, &size);
    return block->hi > block->lo &&
           (size_t)(block->hi - block->lo) / 2 > (size_t)block->blen * size + ((size_t)1 << 20);
}

static int mca_coll_gpu_blocks_push(mca_coll_gpu_blocks_t *list,
                                    const mca_coll_gpu_block_t *block)
{
    if (list->nblocks == list->blocks_max) {
        int                   blocks_max = list->blocks_max ? 2 * list->blocks_max : 16;
        mca_coll_gpu_block_t *grown;
        if (list->nblocks >= MCA_COLL_GPU_COMPACT_MAX_BLOCKS ||
            (grown = realloc(list->blocks, (size_t)blocks_max * sizeof(*grown))) == NULL) {
            return OMPI_ERR_OUT_OF_RESOURCE; /* the whole plan is given up, not retried */
        }
        list->blocks     = grown;
        list->blocks_max = blocks_max;
    }
    list->blocks[list->nblocks++] = *block;
    return OMPI_SUCCESS;
}

static int mca_coll_gpu_blocks_add(mca_coll_gpu_blocks_t *list, struct ompi_datatype_t *dtype,
                                   ptrdiff_t base, int depth);

/* The constructors mca_coll_gpu_blocks_one takes apart. */
static int mca_coll_gpu_has_blocks(int combiner)
{
    switch (combiner) {
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        return 1;
    default:
        return 0;
    }
}

/* Block i of a constructor with blocks (mca_coll_gpu_has_blocks), from its arguments
 * (MPI_Type_get_contents), displaced by base;
 * one mostly of gaps by its type's blocks, element by element (depth: levels left). */
static int mca_coll_gpu_blocks_one(mca_coll_gpu_blocks_t *list, int combiner, const int *ints,
                                   const MPI_Aint *addrs, struct ompi_datatype_t *const *types,
                                   int i, ptrdiff_t base, int depth)
{
    const int            n = ints[0];
    mca_coll_gpu_block_t block = {0, 0, types[0], 0, 0, 0};
    ptrdiff_t            lb, extent;
    const int            mark = list->nblocks, held_mark = list->nheld;

    ompi_datatype_get_extent(types[0], &lb, &extent);
    switch (combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        block.blen = n;
        break;
    case MPI_COMBINER_STRUCT:
        block.blen = ints[1 + i], block.disp = addrs[i], block.type = types[i];
        break;
    case MPI_COMBINER_HINDEXED:
        block.blen = ints[1 + i], block.disp = addrs[i];
        break;
    case MPI_COMBINER_INDEXED:
        block.blen = ints[1 + i], block.disp = (ptrdiff_t)ints[1 + n + i] * extent;
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        block.blen = ints[1], block.disp = addrs[i];
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        block.blen = ints[1], block.disp = (ptrdiff_t)ints[2 + i] * extent;
        break;
    case MPI_COMBINER_VECTOR:
        block.blen = ints[1], block.disp = (ptrdiff_t)i * ints[2] * extent;
        break;
    case MPI_COMBINER_HVECTOR:
        block.blen = ints[1], block.disp = (ptrdiff_t)i * addrs[0];
        break;
    }
    if (block.blen < 0) {
        return OMPI_ERROR;
    }
    block.disp += base;
    mca_coll_gpu_block_bounds(&block);
    if (depth > 0 && mca_coll_gpu_block_sparse(&block) && mca_coll_gpu_has_args(block.type)) {
        ptrdiff_t sub_lb, sub_extent;
        int       rc = OMPI_SUCCESS;
        ompi_datatype_get_extent(block.type, &sub_lb, &sub_extent);
        for (int element = 0; element < block.blen && OMPI_SUCCESS == rc; element++) {
            rc = mca_coll_gpu_blocks_add(list, block.type,
                                         block.disp + (ptrdiff_t)element * sub_extent, depth - 1);
        }
        if (OMPI_SUCCESS == rc || OMPI_ERR_OUT_OF_RESOURCE == rc) {
            return rc; /* too many blocks: the plan is given up (no retry per element) */
        }
        /* its type cannot be taken apart: the block as it is */
        list->nblocks = mark;
        while (list->nheld > held_mark) {
            MPI_Datatype type = list->held[--list->nheld];
            (void)PMPI_Type_free(&type);
        }
    }
    return mca_coll_gpu_blocks_push(list, &block);
}

/* The blocks of dtype's outermost constructor (under any dup or resized), displaced by base,
 * appended to list; one mostly of gaps taken apart in turn, depth levels at most. */
static int mca_coll_gpu_blocks_add(mca_coll_gpu_blocks_t *list, struct ompi_datatype_t *dtype,
                                   ptrdiff_t base, int depth)
{
    struct ompi_datatype_t *outer = dtype, **types = NULL;
    int                     ni, na, nd, combiner, *ints = NULL, held, nblocks, rc = OMPI_ERROR;
    MPI_Aint               *addrs = NULL;

    for (int level = 0;; level++) {
        if (!mca_coll_gpu_has_args(outer) ||
            MPI_SUCCESS != PMPI_Type_get_envelope(outer, &ni, &na, &nd, &combiner) ||
            ni > 2 * MCA_COLL_GPU_COMPACT_MAX_BLOCKS + 2 || na > MCA_COLL_GPU_COMPACT_MAX_BLOCKS ||
            nd > MCA_COLL_GPU_COMPACT_MAX_BLOCKS || nd < 1 || level > 8) {
            return OMPI_ERROR;
        }
        ints  = calloc((size_t)(ni > 0 ? ni : 1), sizeof(*ints)); /* none: dup, resized */
        addrs = malloc((size_t)(na > 0 ? na : 1) * sizeof(*addrs));
        types = malloc((size_t)nd * sizeof(*types));
        if (ints == NULL || addrs == NULL || types == NULL ||
            MPI_SUCCESS != PMPI_Type_get_contents(outer, ni, na, nd, ints, addrs, types)) {
            goto out;
        }
        held = OMPI_SUCCESS;
        for (int i = 0; i < nd; i++) { /* every one, so that every one is freed */
            if (OMPI_SUCCESS != mca_coll_gpu_blocks_hold(list, types[i])) {
                held = OMPI_ERR_OUT_OF_RESOURCE;
            }
        }
        if (OMPI_SUCCESS != held) {
            goto out;
        }
        if (MPI_COMBINER_DUP != combiner && MPI_COMBINER_RESIZED != combiner) {
            break;
        }
        outer = types[0];
        free(ints), free(addrs), free(types);
        ints = NULL, addrs = NULL, types = NULL;
    }
    if (!mca_coll_gpu_has_blocks(combiner)) {
        goto out; /* no blocks to take apart (subarray, darray, ...) */
    }
    nblocks = MPI_COMBINER_CONTIGUOUS == combiner ? 1 : ints[0];
    if (ni < 1 || nblocks < 0 || nblocks > MCA_COLL_GPU_COMPACT_MAX_BLOCKS) {
        goto out;
    }
    rc = OMPI_SUCCESS;
    for (int i = 0; i < nblocks && OMPI_SUCCESS == rc; i++) {
        rc = mca_coll_gpu_blocks_one(list, combiner, ints, addrs, types, i, base, depth);
    }
out:
    free(ints), free(addrs), free(types);
    return rc;
}

static int mca_coll_gpu_cluster_order(const void *left, const void *right)
{
    const mca_coll_gpu_block_t *a = *(mca_coll_gpu_block_t *const *)left;
    const mca_coll_gpu_block_t *b = *(mca_coll_gpu_block_t *const *)right;

    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static ptrdiff_t mca_coll_gpu_compact_mod(ptrdiff_t value)
{
    return ((value % MCA_COLL_GPU_COMPACT_ALIGN) + MCA_COLL_GPU_COMPACT_ALIGN) %
           MCA_COLL_GPU_COMPACT_ALIGN;
}

/* The bytes each block touches; the blocks in clusters; each cluster's compact place. */
static int mca_coll_gpu_compact_place(mca_coll_gpu_blocks_t *list, mca_coll_gpu_compact_t *plan)
{
    mca_coll_gpu_block_t **order = malloc((size_t)(list->nblocks + 1) * sizeof(*order));
    size_t                 touched = 0;
    ptrdiff_t              end = 0;

    plan->clusters = calloc((size_t)(list->nblocks + 1), sizeof(*plan->clusters));
    if (order == NULL || plan->clusters == NULL) {
        free(order);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < list->nblocks; i++) {
        if (list->blocks[i].hi > list->blocks[i].lo) { /* bounds from mca_coll_gpu_block_bounds */
            order[touched++] = &list->blocks[i];
        }
    }
    qsort(order, touched, sizeof(*order), mca_coll_gpu_cluster_order);
    for (size_t i = 0; i < touched; i++) {
        mca_coll_gpu_cluster_t *last = plan->nclusters > 0 ? &plan->clusters[plan->nclusters - 1]
                                                           : NULL;
        if (last == NULL || order[i]->lo > last->hi + MCA_COLL_GPU_COMPACT_NEAR) {
            last     = &plan->clusters[plan->nclusters++];
            last->lo = order[i]->lo;
            last->hi = order[i]->hi;
        }
        last->hi         = order[i]->hi > last->hi ? order[i]->hi : last->hi;
        order[i]->cluster = plan->nclusters - 1;
    }
    for (size_t i = 0; i < plan->nclusters; i++) { /* in order, each at its address mod 64 */
        mca_coll_gpu_cluster_t *c = &plan->clusters[i];
        c->at = (ptrdiff_t)CG_ALIGN_UP((size_t)end, MCA_COLL_GPU_COMPACT_ALIGN) +
                mca_coll_gpu_compact_mod(c->lo);
        end   = c->at + (c->hi - c->lo);
    }
    free(order);
    plan->end    = (size_t)end;
    plan->extent = (ptrdiff_t)CG_ALIGN_UP((size_t)end, MCA_COLL_GPU_COMPACT_ALIGN);
    return plan->nclusters > 0 ? OMPI_SUCCESS : OMPI_ERROR;
}

/* The compact type: a struct of the same blocks at their compact displacements, resized to
 * the compact element (a struct has every constructor's type signature for its blocks). */
static int mca_coll_gpu_compact_type(const mca_coll_gpu_blocks_t *list,
                                     mca_coll_gpu_compact_t *plan)
{
    const int    n = list->nblocks;
    int         *blens = malloc((size_t)(n + 1) * sizeof(*blens));
    MPI_Aint    *disps = malloc((size_t)(n + 1) * sizeof(*disps));
    MPI_Datatype *types = malloc((size_t)(n + 1) * sizeof(*types)), blocks = MPI_DATATYPE_NULL;
    int          rc = OMPI_ERROR;

    if (blens != NULL && disps != NULL && types != NULL) {
        for (int i = 0; i < n; i++) {
            const mca_coll_gpu_block_t   *b = &list->blocks[i];
            const mca_coll_gpu_cluster_t *c = &plan->clusters[b->cluster];
            blens[i] = b->blen;
            types[i] = b->type;
            disps[i] = b->lo == b->hi ? 0 : b->disp + (c->at - c->lo);
        }
        if (MPI_SUCCESS == PMPI_Type_create_struct(n, blens, disps, types, &blocks) &&
            MPI_SUCCESS == PMPI_Type_create_resized(blocks, 0, plan->extent, &plan->type) &&
            MPI_SUCCESS == PMPI_Type_commit(&plan->type)) {
            rc = OMPI_SUCCESS;
        }
    }
    if (blocks != MPI_DATATYPE_NULL) {
        (void)PMPI_Type_free(&blocks);
    }
    free(blens), free(disps), free(types);
    return rc;
}

void mca_coll_gpu_compact_plan(struct ompi_datatype_t *dtype, size_t count,
                               mca_coll_gpu_compact_t *plan)
{
    mca_coll_gpu_blocks_t list;
    mca_coll_gpu_runs_t   check = {0};
    ptrdiff_t             gap, lb, extent;
    size_t                size = 0, span = mca_coll_gpu_span(dtype, count, &gap);

    memset(plan, 0, sizeof(*plan));
    ompi_datatype_type_size(dtype, &size);
    if (span == 0 || span / 2 <= size * count + ((size_t)1 << 20)) {
        return; /* not mostly gaps (every predefined type): staged as it lies */
    }
    ompi_datatype_get_extent(dtype, &lb, &extent);
    if (count > 1 && extent <= 0) {
        return; /* elements from the last one up, or all at one place */
    }
    memset(&list, 0, sizeof(list));
    if (OMPI_SUCCESS != mca_coll_gpu_blocks_add(&list, dtype, 0, MCA_COLL_GPU_COMPACT_DEPTH) ||
        OMPI_SUCCESS != mca_coll_gpu_compact_place(&list, plan) ||
        2 * mca_coll_gpu_compact_span(plan, count) > span ||
        OMPI_SUCCESS != mca_coll_gpu_compact_type(&list, plan) ||
        /* every piece of an element within one cluster, none longer than the extent
         * (checked on two elements: the rows of the rest are alike) */
        OMPI_SUCCESS != mca_coll_gpu_compact_runs(plan, dtype, count > 1 ? 2 : 1, &check)) {
        mca_coll_gpu_compact_free(plan);
    }
    mca_coll_gpu_runs_free(&check);
    mca_coll_gpu_blocks_free(&list);
}

/* The cluster holding offset (clusters in rising order, apart), or NULL. */
static const mca_coll_gpu_cluster_t *mca_coll_gpu_cluster_of(const mca_coll_gpu_compact_t *plan,
                                                             ptrdiff_t offset)
{
    size_t low = 0, high = plan->nclusters;

    while (low < high) {
        const size_t mid = low + (high - low) / 2;
        if (offset < plan->clusters[mid].lo) {
            high = mid;
        } else if (offset >= plan->clusters[mid].hi) {
            low = mid + 1;
        } else {
            return &plan->clusters[mid];
        }
    }
    return NULL;
}

size_t mca_coll_gpu_compact_span(const mca_coll_gpu_compact_t *plan, size_t count)
{
    return count == 0 ? 0 : (count - 1) * (size_t)plan->extent + plan->end;
}

int mca_coll_gpu_compact_runs(const mca_coll_gpu_compact_t *plan, struct ompi_datatype_t *dtype,
                              size_t count, mca_coll_gpu_runs_t *runs)
{
    ptrdiff_t lb, extent;
    int       rc;

    ompi_datatype_get_extent(dtype, &lb, &extent);
    runs->no_join = 1; /* one run per piece of an element: each in one cluster */
    runs->rebased = 1;
    if (OMPI_SUCCESS != (rc = mca_coll_gpu_runs_add(runs, dtype, count, 0))) {
        return rc;
    }
    for (size_t i = 0; i < runs->count; i++) {
        mca_coll_gpu_run_t           *run = &runs->runs[i];
        const mca_coll_gpu_cluster_t *c   = mca_coll_gpu_cluster_of(plan, run->offset);
        if (c == NULL || run->offset + (ptrdiff_t)run->width > c->hi ||
            (run->rows > 1 && run->pitch != (size_t)extent)) {
            return OMPI_ERROR;
        }
        run->host_offset = c->at + (run->offset - c->lo);
        run->host_pitch  = run->rows > 1 ? (size_t)plan->extent : run->width;
    }
    return OMPI_SUCCESS;
}

void mca_coll_gpu_compact_free(mca_coll_gpu_compact_t *plan)
{
    if (plan->type != NULL) {
        MPI_Datatype type = plan->type;
        (void)PMPI_Type_free(&type);
    }
    free(plan->clusters);
    memset(plan, 0, sizeof(*plan));
}
