/*
 * tessera from C: find a path on a navmesh, and bake one.
 *
 *   path NAVMESH FROM_X FROM_Y FROM_Z TO_X TO_Y TO_Z   the path between two scene points
 *   path NAVMESH                                       ... between two random points (seed 1)
 *   path --bake OUT_DIR                                bake the demo world into OUT_DIR, then
 *                                                      a path between two random points on it
 *
 * The path is printed as `tessera path --json` prints it (numbers with all their digits).
 *
 * Build (from the repository root):
 *   cargo build --release -p tessera-capi
 *   cc -o path examples/c/path.c -Icrates/capi/include target/release/libtessera.a \
 *      -lpthread -ldl -lm
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

/* Progress of a bake, one line per stage begun or finished. */
static int32_t on_progress(void *user, const TesseraProgress *p) {
    (void)user;
    if (p->kind == TESSERA_PROGRESS_START) {
        fprintf(stderr, "%s ...\n", p->stage);
    } else if (p->kind == TESSERA_PROGRESS_DONE) {
        fprintf(stderr, "%s done (%llu)\n", p->stage, (unsigned long long)p->done);
    } else if (p->kind == TESSERA_PROGRESS_WARNING) {
        fprintf(stderr, "warning: %s\n", p->message);
    }
    return 0; /* non-zero would cancel the bake */
}

/* A string as a JSON string: quoted, with quotes, backslashes and control characters escaped. */
static void print_json_string(const char *s) {
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            printf("\\%c", c);
        } else if (c < 0x20) {
            printf("\\u%04x", c);
        } else {
            putchar(c);
        }
    }
    putchar('"');
}

static int fail(const char *what, TesseraStatus status) {
    fprintf(stderr, "%s failed (%d): %s\n", what, (int)status, tessera_last_error());
    return status == TESSERA_OK ? 1 : (int)status;
}

int main(int argc, char **argv) {
    char navmesh[4096];
    if (argc == 3 && strcmp(argv[1], "--bake") == 0) {
        TesseraBakeOptions options = tessera_bake_options_default();
        options.out_dir = argv[2]; /* scene NULL: the generated demo world */
        options.threads = 2;
        options.progress = on_progress;
        TesseraStatus status = tessera_bake(&options);
        if (status != TESSERA_OK) {
            return fail("bake", status); /* the exit code tessera bake would give */
        }
        snprintf(navmesh, sizeof navmesh, "%s/navmesh.tsn", argv[2]);
    } else if (argc == 2 || argc == 8) {
        snprintf(navmesh, sizeof navmesh, "%s", argv[1]);
    } else {
        fprintf(stderr, "usage: %s NAVMESH [FROM_X FROM_Y FROM_Z TO_X TO_Y TO_Z]\n"
                        "       %s --bake OUT_DIR\n", argv[0], argv[0]);
        return 2;
    }

    TesseraNavMesh *mesh = NULL;
    TesseraStatus status = tessera_navmesh_open(navmesh, &mesh);
    if (status != TESSERA_OK) {
        return fail("open", status);
    }
    /* One query object per thread; this program has one thread. */
    TesseraQuery *query = NULL;
    status = tessera_query_new(mesh, 1, &query);
    if (status != TESSERA_OK) {
        tessera_navmesh_close(mesh);
        return fail("query", status);
    }

    double from[3], to[3];
    if (argc == 8) {
        for (int k = 0; k < 3; k++) {
            from[k] = strtod(argv[2 + k], NULL);
            to[k] = strtod(argv[5 + k], NULL);
        }
    } else {
        TesseraPoint a, b;
        if (tessera_query_random_point(query, &a) != TESSERA_OK ||
            tessera_query_random_point(query, &b) != TESSERA_OK || !a.found || !b.found) {
            fprintf(stderr, "the navmesh has no walkable area\n");
            return 3;
        }
        memcpy(from, a.point, sizeof from);
        memcpy(to, b.point, sizeof to);
    }

    /* First ask for the sizes (no buffers), then fetch the path into buffers that fit. */
    TesseraPath path;
    status = tessera_query_find_path(query, from, to, NULL, 0, NULL, 0, NULL, 0, &path);
    if (status != TESSERA_OK) {
        return fail("find path", status);
    }
    double *waypoints = malloc((path.waypoint_count + 1) * 3 * sizeof(double));
    uint32_t *links = malloc((path.link_count + 1) * sizeof(uint32_t));
    uint32_t *corridor = malloc((path.corridor_count + 1) * sizeof(uint32_t));
    status = tessera_query_find_path(query, from, to, corridor, path.corridor_count, waypoints,
                                     path.waypoint_count, links, path.link_count, &path);
    if (status != TESSERA_OK) {
        return fail("find path", status);
    }

    fprintf(stderr, "from %.3f %.3f %.3f to %.3f %.3f %.3f: %zu polygons in the corridor\n",
            from[0], from[1], from[2], to[0], to[1], to[2], path.corridor_count);
    printf("{\"found\":%s,\"length\":%.17g,\"link_names\":[", path.found ? "true" : "false",
           path.length);
    for (size_t i = 0; i < path.link_count; i++) {
        printf("%s", i ? "," : "");
        print_json_string(tessera_query_link_name(query, i));
    }
    printf("],\"links\":[");
    for (size_t i = 0; i < path.link_count; i++) {
        printf("%s%u", i ? "," : "", (unsigned)links[i]);
    }
    printf("],\"waypoints\":[");
    for (size_t i = 0; i < path.waypoint_count; i++) {
        const double *w = waypoints + 3 * i;
        printf("%s[%.17g,%.17g,%.17g]", i ? "," : "", w[0], w[1], w[2]);
    }
    printf("]}\n");

    free(corridor);
    free(links);
    free(waypoints);
    tessera_query_free(query);
    tessera_navmesh_close(mesh);
    return 0;
}
