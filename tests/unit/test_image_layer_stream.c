/* test_image_layer_stream.c - unpacking a layer while its blob is written
 * (image_blob_begin_layer, image_layer_stream_* in src/image/image_layer.c)
 * and the queue between the threads (src/image/image_queue.c): the layer
 * is made when both the blob and its diff_id check out, and nothing is
 * left otherwise.  Unpacking needs root (layers keep their owners); those
 * tests skip otherwise. */
#include "common/compat.h"

#include <pthread.h>

#include "../lib/test.h"
#include "common/fs.h"
#include "image_fixtures.h"

#define NEED_ROOT()                         \
        do {                                \
                if (geteuid() != 0)         \
                        SKIP("needs root"); \
        } while (0)

/* ---- the queue ---- */

#define QUEUE_BYTES ((IMAGE_QUEUE_DEPTH + 8) * IMAGE_QUEUE_CHUNK) /* more than the queue holds */

struct producer {
        struct image_queue *q;
        bool complete;  /* close as complete, or broken off */
        size_t written; /* bytes written before a write failed */
        bool write_failed;
};

static void *produce(void *data)
{
        struct producer *p = data;
        char block[7777];

        for (size_t done = 0; done < QUEUE_BYTES;) {
                size_t n = QUEUE_BYTES - done < sizeof(block) ? QUEUE_BYTES - done : sizeof(block);
                for (size_t i = 0; i < n; i++)
                        block[i] = (char)((done + i) % 251);
                if (!image_queue_write(p->q, block, n)) {
                        p->write_failed = true;
                        return NULL;
                }
                done += n;
                p->written = done;
        }
        image_queue_close(p->q, p->complete);
        return NULL;
}

/* Read everything; the bytes read, or -1 when the queue broke off. */
static ssize_t consume_all(struct image_queue *q, bool *ret_in_order)
{
        const void *p;
        ssize_t n, total = 0;

        *ret_in_order = true;
        while ((n = image_queue_read(q, &p)) > 0) {
                for (ssize_t i = 0; i < n; i++)
                        *ret_in_order &= ((const char *)p)[i] == (char)((total + i) % 251);
                total += n;
        }
        return n < 0 ? -1 : total;
}

/* A producer thread that closes the queue as `complete` says, and a
 * consumer that reads it all: consume_all()'s result. */
static ssize_t hand_over(bool complete, bool *ret_in_order)
{
        struct image_queue q;
        struct producer p = { .q = &q, .complete = complete };
        pthread_t t;
        ssize_t n;

        image_queue_init(&q);
        CHECK(pthread_create(&t, NULL, produce, &p) == 0);
        n = consume_all(&q, ret_in_order);
        pthread_join(t, NULL);
        CHECK(!p.write_failed);
        image_queue_release(&q);
        return n;
}

static void test_queue_hands_bytes_over_in_order(void)
{
        bool in_order;

        CHECK(hand_over(true, &in_order) == (ssize_t)QUEUE_BYTES);
        CHECK(in_order);
}

static void test_queue_broken_off(void)
{
        bool in_order;

        CHECK(hand_over(false, &in_order) == -1);
}

static void test_queue_consumer_fails(void)
{
        struct image_queue q;
        struct producer p = { .q = &q, .complete = true };
        const void *chunk;
        pthread_t t;

        image_queue_init(&q);
        CHECK(pthread_create(&t, NULL, produce, &p) == 0);
        CHECK(image_queue_read(&q, &chunk) > 0);
        image_queue_fail(&q); /* the producer, perhaps waiting on a full queue, stops */
        pthread_join(t, NULL);
        CHECK(p.write_failed);
        CHECK(p.written < QUEUE_BYTES);
        image_queue_release(&q);
}

/* ---- layers unpacked as their blob is written ---- */

static struct image_store *store_open(const char *dir)
{
        struct image_store *st = NULL;
        struct tess_error *err = NULL;

        CHECK(image_store_open(dir, &st, &err) == 0);
        tess_error_free(err);
        return st;
}

/* A gzip'd layer of many files (several queue chunks uncompressed), its
 * digest and diff_id. */
struct layer_fx {
        char *blob;
        size_t len;
        char digest[IMAGE_DIGEST_SIZE], diff_id[IMAGE_DIGEST_SIZE];
};

static void layer_fx_build(struct layer_fx *fx)
{
        _cleanup_free_ char *content = xmalloc(64 << 10), *tar = NULL;
        struct tarb t;
        size_t len;

        for (int filter = 0; filter < 2; filter++) {
                for (size_t i = 0; i < 64 << 10; i++)
                        content[i] = (char)('a' + (i * 7 + i / 1000) % 26);
                content[(64 << 10) - 1] = '\0';
                tarb_begin(&t, filter ? ARCHIVE_FILTER_GZIP : ARCHIVE_FILTER_NONE);
                tarb_dir(&t, "./");
                tarb_dir(&t, "usr/");
                for (int i = 0; i < 40; i++) {
                        _cleanup_free_ char *name = xasprintf("usr/f%02d", i);
                        content[i] = 'A';
                        tarb_file(&t, name, content);
                }
                tarb_symlink(&t, "usr/link", "f00");
                if (filter) {
                        fx->blob = tarb_end(&t, &fx->len);
                } else {
                        tar = tarb_end(&t, &len);
                        digest_of(tar, len, fx->diff_id);
                }
        }
        digest_of(fx->blob, fx->len, fx->digest);
}

/* Write fx's blob through a layer writer in uneven pieces, then commit;
 * the commit's error code (0 on success). */
static int write_layer(struct image_store *st, const struct layer_fx *fx, const char *bytes, const char *diff_id)
{
        struct image_blob_writer *w = NULL;
        struct tess_error *err = NULL;
        int r = image_blob_begin_layer(st, fx->digest, (int64_t)fx->len, diff_id, &w, &err);

        for (size_t done = 0; r >= 0 && done < fx->len; done += 1000) {
                size_t n = fx->len - done < 1000 ? fx->len - done : 1000;
                r = image_blob_write(w, bytes + done, n, &err);
        }
        if (r >= 0)
                r = image_blob_commit(w, &err);
        else
                image_blob_abort(w);
        if (r < 0)
                printf("# error: %s\n", err ? err->msg : "(none)");
        tess_error_free(err);
        return r < 0 ? -r : 0;
}

static void test_layer_made_while_its_blob_is_written(void)
{
        struct layer_fx fx;
        char *dir;
        struct image_store *st;
        _cleanup_free_ char *f00 = NULL, *link = NULL, *data = NULL;
        char target[16] = "";
        size_t len;

        NEED_ROOT();
        layer_fx_build(&fx);
        dir = scratch_dir("stream");
        st = store_open(dir);
        CHECK_INTEQ(write_layer(st, &fx, fx.blob, fx.diff_id), 0);
        CHECK(image_blob_exists(st, fx.digest));
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 1);
        CHECK_INTEQ(count_in(dir, "tmp"), 0);
        f00 = xasprintf("%s/layers/sha256/%s/usr/f00", dir, fx.diff_id + 7);
        link = xasprintf("%s/layers/sha256/%s/usr/link", dir, fx.diff_id + 7);
        CHECK(fs_read_file(f00, 1 << 20, &data, &len, NULL) == 0 && len == (64 << 10) - 1 && data[0] == 'A');
        CHECK(readlink(link, target, sizeof(target) - 1) == 3 && streq(target, "f00"));
        /* the layer is there: tagging would keep it; a second writer does not unpack */
        CHECK_INTEQ(write_layer(st, &fx, fx.blob, fx.diff_id), 0);
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 1);
        image_store_close(st);
        scratch_remove(dir);
        free(fx.blob);
}

static void test_layer_left_out_when_something_is_wrong(void)
{
        struct layer_fx fx;
        char *dir, wrong[IMAGE_DIGEST_SIZE];
        _cleanup_free_ char *tampered = NULL;
        struct image_store *st;
        struct image_blob_writer *w = NULL;
        struct tess_error *err = NULL;

        NEED_ROOT();
        layer_fx_build(&fx);
        dir = scratch_dir("stream");
        st = store_open(dir);
        /* the config's diff_id is another: the blob stays, the layer does not */
        digest_of("another layer", 13, wrong);
        CHECK_INTEQ(write_layer(st, &fx, fx.blob, wrong), 0);
        CHECK(image_blob_exists(st, fx.digest));
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 0);
        CHECK_INTEQ(count_in(dir, "tmp"), 0);
        /* bytes that do not match the blob's digest: neither */
        CHECK(image_store_close(st) == NULL);
        scratch_remove(dir);
        dir = scratch_dir("stream");
        st = store_open(dir);
        tampered = xmalloc(fx.len);
        memcpy(tampered, fx.blob, fx.len);
        tampered[fx.len / 2] ^= 0x55;
        CHECK_INTEQ(write_layer(st, &fx, tampered, fx.diff_id), EBADMSG);
        CHECK(!image_blob_exists(st, fx.digest));
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 0);
        CHECK_INTEQ(count_in(dir, "tmp"), 0);
        /* aborted half way */
        CHECK_INTEQ(image_blob_begin_layer(st, fx.digest, (int64_t)fx.len, fx.diff_id, &w, &err), 0);
        CHECK_INTEQ(image_blob_write(w, fx.blob, fx.len / 2, &err), 0);
        image_blob_abort(w);
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 0);
        CHECK_INTEQ(count_in(dir, "tmp"), 0);
        /* a store that does not unpack starts no unpacker */
        image_store_set_unpack_layers(st, false);
        CHECK_INTEQ(write_layer(st, &fx, fx.blob, fx.diff_id), 0);
        CHECK(image_blob_exists(st, fx.digest));
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 0);
        CHECK(err == NULL);
        image_store_close(st);
        scratch_remove(dir);
        free(fx.blob);
}

static void test_layer_not_a_tar(void)
{
        struct layer_fx fx = { 0 };
        char *dir;
        struct image_store *st;

        NEED_ROOT();
        fx.blob = xstrdup("this is not a layer at all, and its digest is right");
        fx.len = strlen(fx.blob);
        digest_of(fx.blob, fx.len, fx.digest);
        dir = scratch_dir("stream");
        st = store_open(dir);
        /* the blob is what its descriptor says: it is committed; the layer is
         * not made (tagging would say why) */
        CHECK_INTEQ(write_layer(st, &fx, fx.blob, fx.digest), 0);
        CHECK(image_blob_exists(st, fx.digest));
        CHECK_INTEQ(count_in(dir, "layers/sha256"), 0);
        CHECK_INTEQ(count_in(dir, "tmp"), 0);
        image_store_close(st);
        scratch_remove(dir);
        free(fx.blob);
}

static const struct test tests[] = {
        TEST(test_queue_hands_bytes_over_in_order),
        TEST(test_queue_broken_off),
        TEST(test_queue_consumer_fails),
        TEST(test_layer_made_while_its_blob_is_written),
        TEST(test_layer_left_out_when_something_is_wrong),
        TEST(test_layer_not_a_tar),
        {},
};

int main(void)
{
        return test_main(tests);
}
