/* Running a planned fast path on a communicator's context: one indirect call through the
 * plan's registry row, with what every hierarchical run needs around it. */
#include "coll/cg_comm_int.h"

#include <stdlib.h>

void cg_comm_shape(const cg_comm_t *c, cg_shape_t *shape)
{
    shape->size       = c->config.size;
    shape->num_nodes  = c->num_nodes;
    shape->local_size = c->local_size;
    shape->max_local  = c->max_local;
    shape->intra_ok   = !c->failed && (c->local_size == 1 || (c->intra && !c->intra->failed));
    shape->inter_ok   = c->inter != NULL && !c->inter->failed;
    shape->inter_staged = c->model_staged;
    shape->lanes      = CG_MAX(c->num_lanes, 1);
    shape->uniform    = c->uniform;
    /* one node: its own class; several: the slowest, so that every rank plans the same */
    shape->topo_class = c->num_nodes > 1 ? c->model_class : c->topo.cls;
}

int cg_comm_failed(const cg_comm_t *c)
{
    return c->failed || (c->intra != NULL && c->intra->failed) ||
           (c->inter != NULL && c->inter->failed);
}

static cg_status_t cg_comm_done(cg_comm_t *c, cg_status_t status)
{
    if (status != CG_OK) {
        c->failed = 1;
    }
    return status;
}

/* A hierarchical call returns only when what it sent has left this process: eager data
 * can wait in a transport's buffer for the sender's progress, which the next call on
 * this worker may be too late to give (the peer may need it first). When it failed here,
 * the ranks of other nodes may wait for data that will never come: abort them, on every
 * lane (their node's ranks learn of it at their next barrier). */
static cg_status_t cg_comm_hier_done(cg_comm_t *c, cg_status_t status)
{
    const int lanes = CG_MAX(c->num_lanes, 1);

    for (int m = 0; status == CG_OK && m < lanes; m++) {
        status = cg_ucx_flush((m == 0 ? c->inter : c->lane[m])->ucx);
    }
    if (status != CG_OK) {
        int *others = malloc((size_t)c->config.size * sizeof(int)), n = 0;
        for (int r = 0; others != NULL && r < c->config.size; r++) {
            if (c->node_of[r] != c->my_node) {
                others[n++] = r;
            }
        }
        for (int m = 0; others != NULL && m < lanes; m++) {
            cg_inter_abort(m == 0 ? c->inter : c->lane[m], others, n, 2.0 / lanes);
        }
        free(others);
    }
    return cg_comm_done(c, status);
}

cg_status_t cg_comm_run(cg_comm_t *c, const cg_plan_t *plan, const cg_call_t *call)
{
    const cg_alg_info_t *info = cg_alg_info(call->coll, plan->alg);

    if (info == NULL || info->run == NULL) {
        return CG_ERR_UNSUPPORTED;
    }
    if (info->scope != CG_SCOPE_HIER) {
        return cg_comm_done(c, info->run(c, plan, call));
    }
    if (c->inter == NULL) {
        return CG_ERR_UNSUPPORTED;
    }
    /* every rank advances the tag sequence, in or out of a rail */
    cg_inter_begin(c->inter);
    return cg_comm_hier_done(c, info->run(c, plan, call));
}
