/* test_image_lru.c - the disk budget's choice of images to untag
 * (image/image_lru.c): least recently used first, images in use never,
 * only as many as it takes to fit, what several images share freed with
 * the last of them, what containers pin never counted as freed. */
#include "common/compat.h"

#include "../lib/test.h"
#include "image/image-internal.h"

#define MB ((int64_t)1 << 20)

/* What image_lru_plan() chose. */
struct plan {
        size_t chosen[8];
        int64_t freed[8];
        int64_t kept;
        size_t n;
};

static struct plan plan_of(const struct image_lru_image *images, size_t n, const int64_t *bytes, const bool *pinned,
                           size_t n_objects, int64_t budget)
{
        struct plan p = { 0 };

        p.n = image_lru_plan(images, n, bytes, pinned, n_objects, budget, p.chosen, p.freed, &p.kept);
        return p;
}

/* Four images, one object of its own each (10, 20, 30, 40 MB), used in
 * the order c, a, d, b. */
static const int64_t own_bytes[] = { 10 * MB, 20 * MB, 30 * MB, 40 * MB };
static const size_t obj0[] = { 0 }, obj1[] = { 1 }, obj2[] = { 2 }, obj3[] = { 3 };

static void four_images(struct image_lru_image out[4])
{
        out[0] = (struct image_lru_image){ "a:1", 200, false, obj0, 1 };
        out[1] = (struct image_lru_image){ "b:1", 400, false, obj1, 1 };
        out[2] = (struct image_lru_image){ "c:1", 100, false, obj2, 1 };
        out[3] = (struct image_lru_image){ "d:1", 300, false, obj3, 1 };
}

static void test_nothing_when_within_budget(void)
{
        struct image_lru_image img[4];
        struct plan p;

        four_images(img);
        p = plan_of(img, 4, own_bytes, NULL, 4, 100 * MB);
        CHECK_INTEQ(p.n, 0);
        CHECK_INTEQ(p.kept, 100 * MB);
        p = plan_of(img, 4, own_bytes, NULL, 4, INT64_MAX);
        CHECK_INTEQ(p.n, 0);
}

static void test_least_recently_used_first_until_it_fits(void)
{
        struct image_lru_image img[4];
        struct plan p;

        four_images(img);
        /* 100 MB, budget 65: c (30 MB, the oldest), then a (10 MB): 60 */
        p = plan_of(img, 4, own_bytes, NULL, 4, 65 * MB);
        CHECK_INTEQ(p.n, 2);
        CHECK_INTEQ(p.chosen[0], 2);
        CHECK_INTEQ(p.freed[0], 30 * MB);
        CHECK_INTEQ(p.chosen[1], 0);
        CHECK_INTEQ(p.freed[1], 10 * MB);
        CHECK_INTEQ(p.kept, 60 * MB);
        /* just over: one is enough */
        p = plan_of(img, 4, own_bytes, NULL, 4, 100 * MB - 1);
        CHECK_INTEQ(p.n, 1);
        CHECK_INTEQ(p.chosen[0], 2);
        /* nothing fits: every one goes, b (the most recent) last */
        p = plan_of(img, 4, own_bytes, NULL, 4, 0);
        CHECK_INTEQ(p.n, 4);
        CHECK_INTEQ(p.chosen[3], 1);
        CHECK_INTEQ(p.kept, 0);
}

static void test_ties_go_by_reference(void)
{
        struct image_lru_image img[4];
        struct plan p;

        four_images(img);
        for (int i = 0; i < 4; i++)
                img[i].last_used = 7;
        p = plan_of(img, 4, own_bytes, NULL, 4, 95 * MB);
        CHECK_INTEQ(p.n, 1);
        CHECK_INTEQ(p.chosen[0], 0); /* "a:1" */
}

static void test_images_in_use_are_spared(void)
{
        struct image_lru_image img[4];
        struct plan p;

        four_images(img);
        img[2].in_use = true; /* c, the oldest */
        p = plan_of(img, 4, own_bytes, NULL, 4, 65 * MB);
        CHECK_INTEQ(p.n, 2);
        CHECK_INTEQ(p.chosen[0], 0); /* a, then d: 100 - 10 - 40 */
        CHECK_INTEQ(p.chosen[1], 3);
        CHECK_INTEQ(p.kept, 50 * MB);
        /* all in use: nothing can go, the budget stays exceeded */
        for (int i = 0; i < 4; i++)
                img[i].in_use = true;
        p = plan_of(img, 4, own_bytes, NULL, 4, 0);
        CHECK_INTEQ(p.n, 0);
        CHECK_INTEQ(p.kept, 100 * MB);
}

static void test_shared_and_pinned_objects(void)
{
        /* objects: 0 base layer (50), 1 x's own (5), 2 y's own (5), 3 an
         * untagged image's layer a container runs on (30), 4 garbage (7) */
        static const int64_t bytes[] = { 50 * MB, 5 * MB, 5 * MB, 30 * MB, 7 * MB };
        static const bool pinned[] = { false, false, false, true, false };
        static const size_t x_objs[] = { 0, 1 }, y_objs[] = { 0, 2 };
        struct image_lru_image img[] = {
                { "x:1", 1, false, x_objs, 2 },
                { "y:1", 2, false, y_objs, 2 },
        };
        struct plan p;

        /* garbage is not counted: 90 kept as is */
        p = plan_of(img, 2, bytes, pinned, 5, 90 * MB);
        CHECK_INTEQ(p.n, 0);
        CHECK_INTEQ(p.kept, 90 * MB);
        /* x frees only its own 5 (y still needs the base) */
        p = plan_of(img, 2, bytes, pinned, 5, 85 * MB);
        CHECK_INTEQ(p.n, 1);
        CHECK_INTEQ(p.freed[0], 5 * MB);
        CHECK_INTEQ(p.kept, 85 * MB);
        /* y frees the base with its own; the pinned layer stays counted */
        p = plan_of(img, 2, bytes, pinned, 5, 40 * MB);
        CHECK_INTEQ(p.n, 2);
        CHECK_INTEQ(p.freed[1], 55 * MB);
        CHECK_INTEQ(p.kept, 30 * MB);
        /* an image listing one object twice frees it once */
        static const size_t twice[] = { 1, 1 };
        struct image_lru_image dup[] = { { "z:1", 1, false, twice, 2 } };
        p = plan_of(dup, 1, bytes, NULL, 5, 0);
        CHECK_INTEQ(p.n, 1);
        CHECK_INTEQ(p.freed[0], 5 * MB);
        CHECK_INTEQ(p.kept, 0);
}

static const struct test tests[] = {
        TEST(test_nothing_when_within_budget), TEST(test_least_recently_used_first_until_it_fits),
        TEST(test_ties_go_by_reference),       TEST(test_images_in_use_are_spared),
        TEST(test_shared_and_pinned_objects),  {},
};

int main(void)
{
        return test_main(tests);
}
