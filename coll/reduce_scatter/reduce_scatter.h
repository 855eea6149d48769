/* Intra-node reduce-scatter. counts[r] elements go to rank r; block r starts at the sum of
 * the counts before it. sbuf NULL: in place (the input is in rbuf, the result goes to the
 * start of rbuf). */
#ifndef CG_REDUCE_SCATTER_H
#define CG_REDUCE_SCATTER_H

#include "coll/intra/intra.h"

/* Every rank reduces its own block from all peers' inputs: zero copy when every input can
 * be shared (out of place), otherwise windows of every block through the scratch halves. */
cg_status_t cg_reduce_scatter_direct(cg_intra_t *g, const void *sbuf, void *rbuf,
                                     const size_t *counts, cg_dtype_t dtype, cg_op_t op);

#endif
