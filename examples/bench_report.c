/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* coll_gpu_bench's output (rank 0): the table on stdout in nccl-tests' style (with the
 * cost counters under every row: --counters), CSV and JSON files, and nccl-tests' summary
 * lines. */
#include "bench.h"

#include <string.h>

/* JSON string body of s (quotes, backslashes and control characters escaped). */
static void bench_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s != NULL && *s; s++) {
        if (*s == '"' || *s == '\\') {
            fprintf(f, "\\%c", *s);
        } else if ((unsigned char)*s < 0x20) {
            fprintf(f, "\\u%04x", (unsigned char)*s);
        } else {
            fputc(*s, f);
        }
    }
    fputc('"', f);
}

static const char *const bench_average_names[] = {"rank 0", "mean over ranks", "min over ranks",
                                                  "max over ranks"};

int bench_report_open(bench_report_t *r)
{
    const bench_opts_t *o = r->o;

    if (o->csv != NULL && (r->csv = fopen(o->csv, "w")) == NULL) {
        fprintf(stderr, "coll_gpu_bench: cannot write %s\n", o->csv);
        return -1;
    }
    if (o->json != NULL && (r->json = fopen(o->json, "w")) == NULL) {
        fprintf(stderr, "coll_gpu_bench: cannot write %s\n", o->json);
        return -1;
    }
    if (r->csv != NULL) {
        fprintf(r->csv, "coll,np,ranks_per_node,type,op,root,in_place,bytes,count,algorithm,"
                        "time_us,algbw_gbs,busbw_gbs,wrong,staged_algorithm,staged_time_us,"
                        "staged_algbw_gbs,staged_busbw_gbs,staged_wrong,floor_time_us,"
                        "floor_algbw_gbs,pct_of_floor,speedup_vs_staged\n");
    }
    if (r->json != NULL) {
        fprintf(r->json, "{\n  \"tool\": \"coll_gpu_bench\",\n  \"coll\": ");
        bench_json_str(r->json, o->coll_name);
        fprintf(r->json, ",\n  \"np\": %d,\n  \"ranks_per_node\": %d,\n  \"device\": ", r->np,
                r->per_node);
        bench_json_str(r->json, r->device);
        fprintf(r->json, ",\n  \"type\": \"%s\",\n  \"op\": \"%s\",\n  \"root\": %d,\n"
                         "  \"in_place\": %d,\n  \"algorithm_setting\": ",
                o->type->name, o->op_name, o->coll == BENCH_BCAST ? o->root : -1, o->in_place);
        bench_json_str(r->json, o->alg);
        fprintf(r->json, ",\n  \"time_reported\": \"%s\",\n  \"copy_bw_gbs\": %.3f,\n"
                         "  \"floor_bytes_per_byte\": %.1f,\n  \"results\": [",
                bench_average_names[o->average], r->copy_bw,
                bench_floor_factor(o->coll, r->per_node));
    }
    return 0;
}

void bench_report_header(bench_report_t *r)
{
    const bench_opts_t *o = r->o;

    printf("# coll_gpu_bench: %s, %d ranks (%d per node), %s, type %s, op %s, %s\n", o->coll_name,
           r->np, r->per_node, r->device, o->type->name, o->op_name,
           o->in_place ? "in place" : "out of place");
    printf("# algorithm under test: %s%s; algorithm column: %s; comparison: %s\n", o->alg,
           r->have_alg ? "" : " (coll/gpu not loaded: the collective underneath)",
           r->have_pvar ? "what ran (coll_gpu_<coll>_last_algorithm, rank 0)"
                        : "the setting (this coll/gpu does not report what ran)",
           r->have_staged ? "staged (host staging through the layer underneath)" : "none");
    printf("# iterations %d x %d call(s), warm-up %d, check %d, blocking %d; time: %s", o->iters,
           o->agg, o->warmup, o->check, o->blocking, bench_average_names[o->average]);
    if (o->rounds > 1) {
        printf("; %d rounds, component and staged by turns: medians", o->rounds);
    }
    printf("\n");
    if (r->copy_bw > 0) {
        printf("# device copy bandwidth B = %.1f GB/s (read + write bytes; node rank 0 alone, "
               "after a barrier); floor: every input read once and every output written once on "
               "the one shared device = %.0f x size bytes\n",
               r->copy_bw, bench_floor_factor(o->coll, r->per_node));
    } else {
        printf("# floor: not shown (not measured, or the node's ranks use different devices)\n");
    }
    if (r->round_trip_us > 0) {
        printf("# device round trip: %.2f us (an 8-byte memset queued and waited for, every rank "
               "at once, the slowest rank's mean; the least a call that runs device work and "
               "waits for it costs)\n",
               r->round_trip_us);
    }
    if (o->counters) {
        printf(r->counters != NULL
                   ? "# counters: coll/gpu's cost counters (MPI_T coll_gpu_<name>) of rank 0 per "
                     "call of the algorithm under test's timed loop, the nonzero ones under each row\n"
                   : "# counters: not available (coll/gpu not loaded)\n");
    }
    printf("#%11s %12s %6s %5s %4s | %-17s %9s %8s %8s %6s | %9s %8s %8s %6s | %9s %8s %6s %7s\n",
           "size", "count", "type", "redop", "root", "algorithm", "time", "algbw", "busbw",
           "#wrong", "staged", "algbw", "busbw", "#wrong", "floor", "algbw", "%floor", "x-staged");
    printf("#%11s %12s %6s %5s %4s | %-17s %9s %8s %8s %6s | %9s %8s %8s %6s | %9s %8s %6s %7s\n",
           "(B)", "(elements)", "", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
           "(GB/s)", "", "(us)", "(GB/s)", "(%)", "(x)");
    fflush(stdout);
}

/* A value per call with at most 2 decimals, trailing zeros dropped (2, 0.5, 1.33); one
 * that would read 0 with 2 significant digits instead (0.001). */
static void bench_per_call(char *out, size_t len, double value)
{
    char *end;

    snprintf(out, len, "%.2f", value);
    end = out + strlen(out) - 1;
    while (*end == '0') {
        *end-- = '\0';
    }
    if (*end == '.') {
        *end = '\0';
    }
    if (value > 0 && strcmp(out, "0") == 0) {
        snprintf(out, len, "%.2g", value);
    }
}

/* The comment line under a row: every counter that moved in the timed loop, per call. */
static void bench_report_counters(const bench_counters_t *counters, double calls)
{
    char   line[4096] = "";
    size_t used       = 0;

    for (int i = 0; i < counters->count && used < sizeof(line); i++) {
        const unsigned long long delta = counters->after[i] - counters->before[i];
        char                     value[32];

        if (delta == 0) {
            continue;
        }
        bench_per_call(value, sizeof(value), (double)delta / calls);
        used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s %s", used ? ", " : "",
                                 counters->names[i], value);
    }
    printf("#   counters per call (rank 0): %s\n", used ? line : "none");
}

void bench_report_row(bench_report_t *r, const bench_row_t *row)
{
    const bench_opts_t *o    = r->o;
    const double        bus  = bench_bus_factor(o->coll, r->np), b = (double)row->bytes;
    const double        algbw = row->time > 0 ? b / row->time / 1e9 : 0;
    const double        s_algbw = row->staged_time > 0 ? b / row->staged_time / 1e9 : 0;
    const double        f_algbw = row->floor_time > 0 ? b / row->floor_time / 1e9 : 0;
    const int           root = o->coll == BENCH_BCAST ? o->root : -1;
    char                staged[64] = "        -        -        -      -", floor[64] = "        -        -      -";
    char                speedup[16] = "      -";

    if (row->staged_time > 0) {
        snprintf(staged, sizeof(staged), "%9.2f %8.3f %8.3f %6ld", row->staged_time * 1e6, s_algbw,
                 s_algbw * bus, row->staged_wrong);
        snprintf(speedup, sizeof(speedup), "%7.2f", row->staged_time / row->time);
    }
    if (row->floor_time > 0) {
        snprintf(floor, sizeof(floor), "%9.2f %8.3f %6.1f", row->floor_time * 1e6, f_algbw,
                 100.0 * algbw / f_algbw);
    }
    printf("%12zu %12zu %6s %5s %4d | %-17s %9.2f %8.3f %8.3f %6ld | %s | %s %s\n", row->bytes,
           row->count, o->type->name, o->op_name, root, row->alg, row->time * 1e6, algbw,
           algbw * bus, row->wrong, staged, floor, speedup);
    if (r->counters != NULL) {
        bench_report_counters(r->counters, (double)o->iters * o->agg);
    }
    fflush(stdout);
    r->rows++;
    r->busbw_sum += algbw * bus;
    r->staged_busbw_sum += s_algbw * bus;
    r->staged_rows += row->staged_time > 0;
    r->wrong += row->wrong + row->staged_wrong;
    if (r->csv != NULL) {
        fprintf(r->csv, "%s,%d,%d,%s,%s,%d,%d,%zu,%zu,%s,%.3f,%.4f,%.4f,%ld,%s,", o->coll_name, r->np,
                r->per_node, o->type->name, o->op_name, root, o->in_place, row->bytes, row->count,
                row->alg, row->time * 1e6, algbw, algbw * bus, row->wrong,
                r->have_staged ? row->staged_alg : "");
        if (row->staged_time > 0) {
            fprintf(r->csv, "%.3f,%.4f,%.4f,%ld,", row->staged_time * 1e6, s_algbw, s_algbw * bus,
                    row->staged_wrong);
        } else {
            fprintf(r->csv, ",,,,");
        }
        if (row->floor_time > 0) {
            fprintf(r->csv, "%.3f,%.4f,%.2f,", row->floor_time * 1e6, f_algbw, 100.0 * algbw / f_algbw);
        } else {
            fprintf(r->csv, ",,,");
        }
        if (row->staged_time > 0) {
            fprintf(r->csv, "%.3f", row->staged_time / row->time);
        }
        fprintf(r->csv, "\n");
    }
    if (r->json != NULL) {
        fprintf(r->json, "%s\n    {\"bytes\": %zu, \"count\": %zu, \"algorithm\": ",
                r->rows > 1 ? "," : "", row->bytes, row->count);
        bench_json_str(r->json, row->alg);
        fprintf(r->json, ", \"time_us\": %.3f, \"algbw_gbs\": %.4f, \"busbw_gbs\": %.4f, \"wrong\": %ld",
                row->time * 1e6, algbw, algbw * bus, row->wrong);
        if (row->staged_time > 0) {
            fprintf(r->json, ", \"staged\": {\"algorithm\": ");
            bench_json_str(r->json, row->staged_alg);
            fprintf(r->json, ", \"time_us\": %.3f, \"algbw_gbs\": %.4f, \"busbw_gbs\": %.4f, "
                             "\"wrong\": %ld}, \"speedup_vs_staged\": %.3f",
                    row->staged_time * 1e6, s_algbw, s_algbw * bus, row->staged_wrong,
                    row->staged_time / row->time);
        }
        if (row->floor_time > 0) {
            fprintf(r->json, ", \"floor\": {\"time_us\": %.3f, \"algbw_gbs\": %.4f}, \"pct_of_floor\": %.2f",
                    row->floor_time * 1e6, f_algbw, 100.0 * algbw / f_algbw);
        }
        fprintf(r->json, "}");
    }
}

int bench_report_close(bench_report_t *r)
{
    const double avg = r->rows ? r->busbw_sum / r->rows : 0;
    const double avg_staged = r->staged_rows ? r->staged_busbw_sum / r->staged_rows : 0;

    printf("# Out of bounds values : %ld %s\n", r->wrong, r->wrong ? "FAILED" : "OK");
    printf("# Avg bus bandwidth    : %g\n", avg);
    if (r->have_staged) {
        printf("# Avg bus bandwidth (staged) : %g\n", avg_staged);
    }
    printf("# %s: %ld wrong elements\n", r->wrong ? "FAILED" : "all results correct", r->wrong);
    printf("#\n");
    fflush(stdout);
    if (r->csv != NULL) {
        fclose(r->csv);
    }
    if (r->json != NULL) {
        fprintf(r->json, "\n  ],\n  \"avg_busbw_gbs\": %.4f,\n", avg);
        if (r->have_staged) {
            fprintf(r->json, "  \"avg_busbw_staged_gbs\": %.4f,\n", avg_staged);
        }
        fprintf(r->json, "  \"wrong\": %ld,\n  \"ok\": %s\n}\n", r->wrong, r->wrong ? "false" : "true");
        fclose(r->json);
    }
    return r->wrong ? 1 : 0;
}
