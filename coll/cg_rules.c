/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Rules file: lines that override the cost model for a collective, a message size range
 * and a node count range (coll_gpu_rules_file). The first line that matches the call, and
 * whose algorithm can run on the communicator, wins.
 *
 *   # collective  min_bytes  max_bytes  min_nodes  max_nodes  algorithm
 *   allreduce     0          64k        1          1          one_shot
 *   allreduce     64k        *          2          *          hier_ring
 *   *             *          *          *          *          auto
 *
 * Sizes take k, M, G (binary) suffixes; "*" is no bound (or any collective); bounds are
 * inclusive; "#" starts a comment. A malformed line makes the whole file rejected, with the
 * file name and line number in the message.
 */
#include "coll/cg_coll.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cg_rules {
    int        n;
    cg_rule_t *rules;
};

static int cg_rules_coll(const char *word, int *coll)
{
    if (strcmp(word, "*") == 0) {
        *coll = -1;
        return 1;
    }
    for (int c = 0; c < CG_COLL_COUNT; c++) {
        if (strcmp(word, cg_coll_name((cg_coll_t)c)) == 0) {
            *coll = c;
            return 1;
        }
    }
    return 0;
}

static int cg_rules_size(const char *word, size_t any, size_t *value)
{
    if (strcmp(word, "*") == 0) {
        *value = any;
        return 1;
    }
    return cg_size_parse(word, value) == CG_OK;
}

static int cg_rules_alg(int coll, const char *word, cg_alg_t *alg)
{
    for (int a = 0; a < CG_ALG_COUNT; a++) {
        if (strcmp(word, cg_alg_name((cg_alg_t)a)) != 0) {
            continue;
        }
        if (coll >= 0 && !cg_alg_valid((cg_coll_t)coll, (cg_alg_t)a)) {
            return 0;
        }
        *alg = (cg_alg_t)a;
        return 1;
    }
    return 0;
}

/* Parse one line into r; 0 for a blank or comment line, 1 for a rule, -1 (with why) bad. */
static int cg_rules_line(char *line, cg_rule_t *r, char *why, size_t len)
{
    char  *field[7];
    int    n = 0;
    size_t lo_n, hi_n;

    line[strcspn(line, "#\r\n")] = '\0';
    for (char *save = NULL, *tok = strtok_r(line, " \t", &save); tok && n < 7;
         tok = strtok_r(NULL, " \t", &save)) {
        field[n++] = tok;
    }
    if (n == 0) {
        return 0;
    }
    if (n != 6) {
        snprintf(why, len, "%d fields, 6 expected (collective min_bytes max_bytes min_nodes "
                 "max_nodes algorithm)", n);
        return -1;
    }
    if (!cg_rules_coll(field[0], &r->coll)) {
        snprintf(why, len, "unknown collective \"%s\"", field[0]);
        return -1;
    }
    if (!cg_rules_size(field[1], 0, &r->min_bytes) || !cg_rules_size(field[2], SIZE_MAX, &r->max_bytes)) {
        snprintf(why, len, "bad size \"%s\" or \"%s\"", field[1], field[2]);
        return -1;
    }
    if (!cg_rules_size(field[3], 0, &lo_n) || !cg_rules_size(field[4], INT_MAX, &hi_n) ||
        lo_n > INT_MAX || hi_n > INT_MAX) {
        snprintf(why, len, "bad node count \"%s\" or \"%s\"", field[3], field[4]);
        return -1;
    }
    r->min_nodes = (int)lo_n;
    r->max_nodes = (int)hi_n;
    if (r->min_bytes > r->max_bytes || r->min_nodes > r->max_nodes) {
        snprintf(why, len, "empty range");
        return -1;
    }
    if (!cg_rules_alg(r->coll, field[5], &r->alg)) {
        snprintf(why, len, "\"%s\" is not an algorithm of %s", field[5],
                 r->coll < 0 ? "the collectives" : cg_coll_name((cg_coll_t)r->coll));
        return -1;
    }
    return 1;
}

cg_status_t cg_rules_load(const char *path, cg_rules_t **rules_out, char *error, size_t error_len)
{
    FILE       *f = fopen(path, "r");
    cg_rules_t *rules;
    char        line[1024], why[160];
    int         lineno = 0;

    if (f == NULL) {
        snprintf(error, error_len, "%s: cannot open", path);
        return CG_ERR_IO;
    }
    rules = calloc(1, sizeof(*rules));
    if (rules == NULL) {
        fclose(f);
        return CG_ERR_NO_MEMORY;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        cg_rule_t  r = {0};
        cg_rule_t *grown;
        int        kind;

        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) { /* the rest would read as a line */
            snprintf(why, sizeof(why), "longer than %zu characters", sizeof(line) - 2);
            kind = -1;
        } else {
            kind = cg_rules_line(line, &r, why, sizeof(why));
        }
        if (kind < 0) {
            snprintf(error, error_len, "%s:%d: %s", path, lineno, why);
            fclose(f);
            cg_rules_free(rules);
            return CG_ERR_PARSE;
        }
        if (kind == 0) {
            continue;
        }
        grown = realloc(rules->rules, (size_t)(rules->n + 1) * sizeof(*grown));
        if (grown == NULL) {
            fclose(f);
            cg_rules_free(rules);
            return CG_ERR_NO_MEMORY;
        }
        r.line                 = lineno;
        rules->rules           = grown;
        rules->rules[rules->n++] = r;
    }
    if (ferror(f)) { /* a directory, an I/O error: not an empty or shorter file */
        snprintf(error, error_len, "%s:%d: cannot read (%s)", path, lineno + 1, strerror(errno));
        fclose(f);
        cg_rules_free(rules);
        return CG_ERR_IO;
    }
    fclose(f);
    *rules_out = rules;
    return CG_OK;
}

void cg_rules_free(cg_rules_t *rules)
{
    if (rules != NULL) {
        free(rules->rules);
        free(rules);
    }
}

/* FNV-1a over what the rules decide (not their line numbers): ranks that loaded files
 * with the same rules get the same digest; none loaded: 0. */
uint64_t cg_rules_digest(const cg_rules_t *rules)
{
    uint64_t digest = 0xcbf29ce484222325ull;

    if (rules == NULL) {
        return 0;
    }
    for (int i = 0; i < rules->n; i++) {
        const cg_rule_t *r = &rules->rules[i];
        const uint64_t   fields[6] = {(uint64_t)(int64_t)r->coll, r->min_bytes, r->max_bytes,
                                      (uint64_t)(int64_t)r->min_nodes, (uint64_t)(int64_t)r->max_nodes,
                                      (uint64_t)r->alg};
        for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
            for (int b = 0; b < 8; b++) {
                digest = (digest ^ ((fields[f] >> (8 * b)) & 0xff)) * 0x100000001b3ull;
            }
        }
    }
    return digest | 1; /* never 0: some rules, even none in the file, differ from no file */
}

int cg_rules_count(const cg_rules_t *rules)
{
    return rules ? rules->n : 0;
}

const cg_rule_t *cg_rules_get(const cg_rules_t *rules, int i)
{
    return (rules && i >= 0 && i < rules->n) ? &rules->rules[i] : NULL;
}

int cg_rule_matches(const cg_rule_t *r, cg_coll_t coll, size_t bytes, int nodes)
{
    return (r->coll < 0 || r->coll == (int)coll) && bytes >= r->min_bytes &&
           bytes <= r->max_bytes && nodes >= r->min_nodes && nodes <= r->max_nodes;
}
