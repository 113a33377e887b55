#include "cpixels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every buffer starts 64 bytes after its allocation: its capacity and a mark live there. */
#define DR_HEADER 64
#define DR_MARK 0x44524b524f4f4d50ULL /* "DRKROOMP" */
#define DR_SMALL ((size_t)256 << 10)
#define DR_SLOTS 12

typedef struct {
    size_t capacity;
    uint64_t mark;
} dr_header;

typedef struct {
    void *buffers[DR_SLOTS];
    size_t capacities[DR_SLOTS];
    int count;
    size_t kept;
    size_t reused;
    size_t allocated;
} dr_pool;

static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static _Atomic size_t pool_limit = (size_t)160 << 20;

static void release_pool(void *value) {
    dr_pool *pool = value;
    for (int i = 0; i < pool->count; i++) free((char *)pool->buffers[i] - DR_HEADER);
    free(pool);
}

static void make_key(void) {
    pthread_key_create(&pool_key, release_pool);
    const char *setting = getenv("DARKROOM_PIXEL_POOL_MB");
    if (setting != NULL && *setting != '\0') {
        char *end = NULL;
        unsigned long long megabytes = strtoull(setting, &end, 10);
        if (end != NULL && *end == '\0') atomic_store(&pool_limit, (size_t)megabytes << 20);
    }
}

/* The calling thread's pool, made on first use; NULL when it cannot be had. */
static dr_pool *current_pool(void) {
    pthread_once(&pool_once, make_key);
    dr_pool *pool = pthread_getspecific(pool_key);
    if (pool == NULL) {
        pool = calloc(1, sizeof *pool);
        if (pool == NULL) return NULL;
        if (pthread_setspecific(pool_key, pool) != 0) {
            free(pool);
            return NULL;
        }
    }
    return pool;
}

static void remove_slot(dr_pool *pool, int index) {
    pool->kept -= pool->capacities[index];
    pool->count--;
    pool->buffers[index] = pool->buffers[pool->count];
    pool->capacities[index] = pool->capacities[pool->count];
}

static void *fresh(size_t bytes) {
    if (bytes > SIZE_MAX - DR_HEADER) return NULL;
    void *base = NULL;
    if (posix_memalign(&base, 64, bytes + DR_HEADER) != 0) return NULL;
    dr_header header = {bytes, DR_MARK};
    memcpy(base, &header, sizeof header);
    return (char *)base + DR_HEADER;
}

void *dr_pixels_alloc(size_t bytes) {
    if (bytes == 0) bytes = 1;
    dr_pool *pool = bytes >= DR_SMALL ? current_pool() : NULL;
    if (pool == NULL) return fresh(bytes);
    /* The smallest kept buffer it fits, if that is at most twice the request plus 1 MiB. */
    int best = -1;
    for (int i = 0; i < pool->count; i++) {
        size_t capacity = pool->capacities[i];
        if (capacity >= bytes && capacity <= bytes * 2 + ((size_t)1 << 20) &&
            (best < 0 || capacity < pool->capacities[best]))
            best = i;
    }
    if (best >= 0) {
        void *buffer = pool->buffers[best];
        remove_slot(pool, best);
        pool->reused++;
        return buffer;
    }
    /* A new buffer: first free kept ones that would push the thread past its limit. */
    size_t limit = atomic_load(&pool_limit);
    while (pool->count > 0 && pool->kept + bytes > limit) {
        int largest = 0;
        for (int i = 1; i < pool->count; i++)
            if (pool->capacities[i] > pool->capacities[largest]) largest = i;
        free((char *)pool->buffers[largest] - DR_HEADER);
        remove_slot(pool, largest);
    }
    pool->allocated++;
    return fresh(bytes);
}

void dr_pixels_free(void *pointer) {
    if (pointer == NULL) return;
    dr_header header;
    memcpy(&header, (char *)pointer - DR_HEADER, sizeof header);
    size_t limit = atomic_load(&pool_limit);
    dr_pool *pool = header.capacity >= DR_SMALL && limit > 0 ? current_pool() : NULL;
    if (pool == NULL || pool->kept + header.capacity > limit) {
        free((char *)pointer - DR_HEADER);
        return;
    }
    if (pool->count == DR_SLOTS) {
        /* Full: the smallest kept buffer makes room (if it is smaller than this one). */
        int smallest = 0;
        for (int i = 1; i < pool->count; i++)
            if (pool->capacities[i] < pool->capacities[smallest]) smallest = i;
        if (pool->capacities[smallest] >= header.capacity) {
            free((char *)pointer - DR_HEADER);
            return;
        }
        free((char *)pool->buffers[smallest] - DR_HEADER);
        remove_slot(pool, smallest);
    }
    pool->buffers[pool->count] = pointer;
    pool->capacities[pool->count] = header.capacity;
    pool->count++;
    pool->kept += header.capacity;
}

void dr_pixels_set_limit(size_t bytes) {
    pthread_once(&pool_once, make_key);
    atomic_store(&pool_limit, bytes);
}

size_t dr_pixels_limit(void) {
    pthread_once(&pool_once, make_key);
    return atomic_load(&pool_limit);
}

size_t dr_pixels_kept(void) {
    dr_pool *pool = current_pool();
    return pool == NULL ? 0 : pool->kept;
}

size_t dr_pixels_reused(void) {
    dr_pool *pool = current_pool();
    return pool == NULL ? 0 : pool->reused;
}

size_t dr_pixels_allocated(void) {
    dr_pool *pool = current_pool();
    return pool == NULL ? 0 : pool->allocated;
}
