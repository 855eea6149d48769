/* Base services and the planner's tables: status strings, log configuration, size parsing,
 * algorithm names and validity, and the staged fallback of the planner. */
#include "base/cg_base.h"
#include "coll/cg_coll.h"

#include <check.h>
#include <string.h>

START_TEST(test_status_strings)
{
    for (int s = CG_ERR_INTERNAL; s <= CG_OK; s++) {
        ck_assert_str_ne(cg_status_string((cg_status_t)s), "unknown status");
    }
    ck_assert_str_eq(cg_status_string((cg_status_t)-999), "unknown status");
}
END_TEST

START_TEST(test_log_subsystems)
{
    int ok;
    ck_assert_uint_eq(cg_log_subsys_parse("all", &ok), CG_SUB_ALL);
    ck_assert(ok);
    ck_assert_uint_eq(cg_log_subsys_parse("coll,plan", &ok), CG_SUB_COLL | CG_SUB_PLAN);
    ck_assert_uint_eq(cg_log_subsys_parse("^ucx", &ok), CG_SUB_ALL & ~CG_SUB_UCX);
    ck_assert(ok);
    cg_log_subsys_parse("coll,bogus", &ok);
    ck_assert(!ok);
    ck_assert_int_eq(cg_log_configure(3, "bogus"), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_log_level, 3);
    ck_assert_int_eq(cg_log_configure(2, "dev"), CG_OK);
    ck_assert(cg_log_enabled(CG_LOG_CALL, CG_SUB_DEV));
    ck_assert(!cg_log_enabled(CG_LOG_CALL, CG_SUB_COLL));
    ck_assert(cg_log_enabled(CG_LOG_ERROR, CG_SUB_COLL)); /* errors always */
    ck_assert(!cg_log_enabled(CG_LOG_DETAIL, CG_SUB_DEV));
    cg_log_configure(0, "all");
}
END_TEST

START_TEST(test_size_parse)
{
    size_t v = 0;
    ck_assert_int_eq(cg_size_parse("4096", &v), CG_OK);
    ck_assert_uint_eq(v, 4096);
    ck_assert_int_eq(cg_size_parse("64k", &v), CG_OK);
    ck_assert_uint_eq(v, 65536);
    ck_assert_int_eq(cg_size_parse("8MiB", &v), CG_OK);
    ck_assert_uint_eq(v, 8u << 20);
    ck_assert_int_eq(cg_size_parse("1G", &v), CG_OK);
    ck_assert_uint_eq(v, 1u << 30);
    ck_assert_int_eq(cg_size_parse("12x", &v), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_size_parse("-1", &v), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_size_parse("", &v), CG_ERR_INVALID_PARAM);
}
END_TEST

START_TEST(test_algorithm_tables)
{
    for (int c = 0; c < CG_COLL_COUNT; c++) {
        const cg_alg_t *algs = cg_coll_algs((cg_coll_t)c);
        ck_assert_int_eq(algs[0], CG_ALG_AUTO);
        ck_assert(cg_alg_valid((cg_coll_t)c, CG_ALG_STAGED));
        for (int i = 0; algs[i] != (cg_alg_t)-1; i++) {
            ck_assert_str_ne(cg_alg_name(algs[i]), "unknown");
        }
    }
    ck_assert_str_eq(cg_coll_name(CG_COLL_REDUCE_SCATTER_BLOCK), "reduce_scatter_block");
    ck_assert(!cg_alg_valid(CG_COLL_COUNT, CG_ALG_AUTO));
}
END_TEST

START_TEST(test_planner_staged)
{
    cg_planner_config_t config;
    cg_plan_t           plan;
    cg_call_t           call = {.coll = CG_COLL_ALLREDUCE, .count = 10, .bytes = 40,
                                .dtype = CG_DT_INT32, .op = CG_OP_SUM, .comm_size = 4};

    cg_planner_config_default(&config);
    cg_plan_select(&config, &call, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_STAGED);
    config.forced[CG_COLL_ALLREDUCE] = CG_ALG_STAGED;
    cg_plan_select(&config, &call, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_STAGED);
    ck_assert_str_eq(plan.reason, "forced");
}
END_TEST

int main(void)
{
    Suite   *s  = suite_create("base");
    TCase   *tc = tcase_create("base");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc, test_status_strings);
    tcase_add_test(tc, test_log_subsystems);
    tcase_add_test(tc, test_size_parse);
    tcase_add_test(tc, test_algorithm_tables);
    tcase_add_test(tc, test_planner_staged);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
