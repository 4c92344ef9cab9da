/*
 * zspace: build a pool with the real OpenZFS code (Debian's userspace libzpool)
 * on sparse files and print what `zpool list -Hp` and `zfs list -Hp` would show.
 * It is the capacity oracle of zfslab's tests; see docs/test-guest.md#libzpool-oracle.
 *
 * usage: zspace [-a ashift] [-b BYTES] [-k] [-w MIB] POOL VDEVSPEC...
 *   VDEVSPEC is zpool create's grammar: FILE, or mirror|raidz[1-3]|draidP[:Nd][:Nc][:Ns]|spare|cache
 *   followed by its FILEs; special, dedup and log put the vdevs after them in that class, as
 *   zpool_vdev.c construct_spec does (ZPOOL_CONFIG_ALLOCATION_BIAS, ZPOOL_CONFIG_IS_LOG).  -k exports the pool instead of destroying it.
 *   -w MIB first writes MIB MiB of incompressible records (of -b BYTES, default 128 KiB: the
 *   object's block size, as a zvol's volblocksize) into one object and
 *   prints the CPU seconds this process spent until they are on the vdevs: the host cost of
 *   a layout's write pipeline (benchmarks/write_cpu_cost.py).
 *
 * Only nvlist and exported functions are used: the packaged headers do not match
 * the library's struct layouts (docs/test-guest.md#libzpool-oracle), so reaching into structs crashes.
 */
#include "zoracle.h"

static int
is_class(const char *s)
{
	return (strcmp(s, "special") == 0 || strcmp(s, "dedup") == 0 ||
	    strcmp(s, "log") == 0);
}

static int
is_group(const char *s)
{
	return (strcmp(s, "mirror") == 0 || strncmp(s, "raidz", 5) == 0 ||
	    strncmp(s, "draid", 5) == 0 || strcmp(s, "spare") == 0 ||
	    strcmp(s, "cache") == 0 || is_class(s));
}

/* Mark a top-level vdev as the class `bias` names ("" for the normal class). */
static void
set_class(nvlist_t *top, const char *bias)
{
	fnvlist_add_uint64(top, ZPOOL_CONFIG_IS_LOG, strcmp(bias, "log") == 0);
	if (*bias)
		fnvlist_add_string(top, ZPOOL_CONFIG_ALLOCATION_BIAS, bias);
}

/* Parse draid[p][:Nd][:Nc][:Ns]; children is checked against the files given. */
static void
parse_draid(const char *s, uint64_t *p, uint64_t *d, uint64_t *c, uint64_t *sp)
{
	const char *q = s + 5;
	*p = 1; *d = 0; *c = 0; *sp = 0;
	if (*q >= '0' && *q <= '9')
		*p = strtoull(q, (char **)&q, 10);
	while (*q == ':') {
		char *end;
		uint64_t v = strtoull(q + 1, &end, 10);
		switch (*end) {
		case 'd': *d = v; break;
		case 'c': *c = v; break;
		case 's': *sp = v; break;
		default:
			fprintf(stderr, "zspace: bad draid spec %s\n", s);
			exit(2);
		}
		q = end + 1;
	}
}

int
main(int argc, char **argv)
{
	int opt, keep = 0;
	long write_mib = 0;
	size_t record = 128 * 1024;
	while ((opt = getopt(argc, argv, "a:b:kw:")) != -1) {
		if (opt == 'a')
			ashift = atoi(optarg);
		else if (opt == 'b')
			record = (size_t)atol(optarg);
		else if (opt == 'w')
			write_mib = atol(optarg);
		else if (opt == 'k')
			keep = 1;
		else {
			fprintf(stderr, "usage: zspace [-a ashift] [-b BYTES] [-k] [-w MIB] POOL VDEVSPEC...\n");
			return (2);
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "usage: zspace [-a ashift] [-b BYTES] [-k] [-w MIB] POOL VDEVSPEC...\n");
		return (2);
	}
	const char *pool = argv[optind++];

	nvlist_t *tops[MAXTOP], *spares[MAXLEAF], *caches[MAXLEAF];
	int ntop = 0, nspare = 0, ncache = 0;
	const char *bias = "";	/* the class of the vdevs that follow */
	for (int i = optind; i < argc; ) {
		if (ntop == MAXTOP) {
			fprintf(stderr, "zspace: too many top-level vdevs\n");
			return (2);
		}
		if (!is_group(argv[i])) {
			nvlist_t *leaf = make_leaf(argv[i++]);
			set_class(leaf, bias);
			tops[ntop++] = leaf;
			continue;
		}
		const char *kind = argv[i++];
		if (is_class(kind)) {
			bias = kind;
			continue;
		}
		if (strcmp(kind, "spare") == 0 || strcmp(kind, "cache") == 0) {
			int is_spare = strcmp(kind, "spare") == 0;
			while (i < argc && !is_group(argv[i]) && nspare < MAXLEAF && ncache < MAXLEAF) {
				if (is_spare)
					spares[nspare++] = make_leaf(argv[i++]);
				else
					caches[ncache++] = make_leaf(argv[i++]);
			}
			bias = "";	/* construct_spec: spare and cache end a class */
			continue;
		}
		nvlist_t *leaves[MAXLEAF];
		int nleaf = 0;
		while (i < argc && !is_group(argv[i]) && nleaf < MAXLEAF)
			leaves[nleaf++] = make_leaf(argv[i++]);
		nvlist_t *top = fnvlist_alloc();
		set_class(top, bias);
		if (strcmp(kind, "mirror") == 0) {
			fnvlist_add_string(top, ZPOOL_CONFIG_TYPE, VDEV_TYPE_MIRROR);
		} else if (strncmp(kind, "raidz", 5) == 0) {
			uint64_t p = kind[5] ? strtoull(kind + 5, NULL, 10) : 1;
			fnvlist_add_string(top, ZPOOL_CONFIG_TYPE, VDEV_TYPE_RAIDZ);
			fnvlist_add_uint64(top, ZPOOL_CONFIG_NPARITY, p);
		} else {
			uint64_t p, d, c, s;
			parse_draid(kind, &p, &d, &c, &s);
			if (c != 0 && c != (uint64_t)nleaf) {
				fprintf(stderr, "zspace: %s wants %llu children, got %d\n",
				    kind, (u_longlong_t)c, nleaf);
				return (2);
			}
			c = nleaf;
			if (d == 0)
				d = MIN(c - s - p, 8);
			/* the same rule as zpool's draid_config_by_type() */
			uint64_t ngroups = 1;
			while ((ngroups * (d + p)) % (c - s) != 0)
				ngroups++;
			fnvlist_add_string(top, ZPOOL_CONFIG_TYPE, VDEV_TYPE_DRAID);
			fnvlist_add_uint64(top, ZPOOL_CONFIG_NPARITY, p);
			fnvlist_add_uint64(top, ZPOOL_CONFIG_DRAID_NDATA, d);
			fnvlist_add_uint64(top, ZPOOL_CONFIG_DRAID_NSPARES, s);
			fnvlist_add_uint64(top, ZPOOL_CONFIG_DRAID_NGROUPS, ngroups);
		}
		fnvlist_add_nvlist_array(top, ZPOOL_CONFIG_CHILDREN,
		    NVLIST_ARRAY(leaves), nleaf);
		for (int j = 0; j < nleaf; j++)
			fnvlist_free(leaves[j]);
		tops[ntop++] = top;
	}
	nvlist_t *root = fnvlist_alloc();
	fnvlist_add_string(root, ZPOOL_CONFIG_TYPE, VDEV_TYPE_ROOT);
	fnvlist_add_nvlist_array(root, ZPOOL_CONFIG_CHILDREN,
	    NVLIST_ARRAY(tops), ntop);
	if (nspare > 0)
		fnvlist_add_nvlist_array(root, ZPOOL_CONFIG_SPARES,
		    NVLIST_ARRAY(spares), nspare);
	if (ncache > 0)
		fnvlist_add_nvlist_array(root, ZPOOL_CONFIG_L2CACHE,
		    NVLIST_ARRAY(caches), ncache);

	/* A private cache file: the default would overwrite the host's zpool.cache. */
	char cfg[] = "/tmp/zspace-cache-XXXXXX";
	int fd = mkstemp(cfg);
	if (fd < 0) {
		perror("mkstemp");
		return (1);
	}
	close(fd);
	spa_config_path = cfg;
	kernel_init(SPA_MODE_READ | SPA_MODE_WRITE);

	/* Enable every feature, as zpool create does (dRAID asserts without them). */
	nvlist_t *props = fnvlist_alloc();
	for (int f = 0; f < SPA_FEATURES; f++) {
		char name[256];
		snprintf(name, sizeof (name), "feature@%s",
		    spa_feature_table[f].fi_uname);
		fnvlist_add_uint64(props, name, 0);
	}
	int err = spa_create(pool, root, props, NULL, NULL);
	if (err != 0) {
		fprintf(stderr, "zspace: spa_create failed: error %d\n", err);
		kernel_fini();
		unlink(cfg);
		return (1);
	}
	spa_t *spa;
	VERIFY0(spa_open(pool, &spa, FTAG));
	txg_wait_synced(spa_get_dsl(spa), 0);
	if (write_mib > 0)
		write_records(pool, spa, write_mib, record);

	objset_t *os;
	VERIFY0(dmu_objset_hold(pool, FTAG, &os));
	nvlist_t *ds = fnvlist_alloc();
	dmu_objset_stats(os, ds);
	dmu_objset_rele(os, FTAG);
	uint64_t used = fnvlist_lookup_uint64(fnvlist_lookup_nvlist(ds,
	    zfs_prop_to_name(ZFS_PROP_USED)), "value");
	uint64_t avail = fnvlist_lookup_uint64(fnvlist_lookup_nvlist(ds,
	    zfs_prop_to_name(ZFS_PROP_AVAILABLE)), "value");
	uint64_t refer = fnvlist_lookup_uint64(fnvlist_lookup_nvlist(ds,
	    zfs_prop_to_name(ZFS_PROP_REFERENCED)), "value");

#ifdef ZFS_23
	nvlist_t *pp = fnvlist_alloc();
	VERIFY0(spa_prop_get(spa, pp));
#else
	nvlist_t *pp = NULL;
	VERIFY0(spa_prop_get(spa, &pp));
#endif
	uint64_t size = fnvlist_lookup_uint64(fnvlist_lookup_nvlist(pp,
	    zpool_prop_to_name(ZPOOL_PROP_SIZE)), "value");
	uint64_t alloc = fnvlist_lookup_uint64(fnvlist_lookup_nvlist(pp,
	    zpool_prop_to_name(ZPOOL_PROP_ALLOCATED)), "value");
	uint64_t freeb = fnvlist_lookup_uint64(fnvlist_lookup_nvlist(pp,
	    zpool_prop_to_name(ZPOOL_PROP_FREE)), "value");

	spa_config_enter(spa, SCL_ALL, FTAG, RW_READER);
	nvlist_t *config = spa_config_generate(spa, NULL, -1ULL, B_TRUE);
	spa_config_exit(spa, SCL_ALL, FTAG);
	nvlist_t *tree = fnvlist_lookup_nvlist(config, ZPOOL_CONFIG_VDEV_TREE);
	nvlist_t **child;
	uint_t nchild;
	VERIFY0(nvlist_lookup_nvlist_array(tree, ZPOOL_CONFIG_CHILDREN, &child,
	    &nchild));
	printf("pool=%s top_vdevs=%u\n", pool, nchild);
	for (uint_t c = 0; c < nchild; c++) {
		vdev_stat_t *vs;
		uint_t n;
		VERIFY0(nvlist_lookup_uint64_array(child[c],
		    ZPOOL_CONFIG_VDEV_STATS, (uint64_t **)&vs, &n));
		uint64_t ms_shift = 0;
		(void) nvlist_lookup_uint64(child[c], ZPOOL_CONFIG_METASLAB_SHIFT,
		    &ms_shift);
		printf("vdev=%u type=%s ashift=%llu asize=%llu ms_shift=%llu "
		    "vs_space=%llu vs_dspace=%llu\n", c,
		    fnvlist_lookup_string(child[c], ZPOOL_CONFIG_TYPE),
		    (u_longlong_t)fnvlist_lookup_uint64(child[c], ZPOOL_CONFIG_ASHIFT),
		    (u_longlong_t)fnvlist_lookup_uint64(child[c], ZPOOL_CONFIG_ASIZE),
		    (u_longlong_t)ms_shift, (u_longlong_t)vs->vs_space,
		    (u_longlong_t)vs->vs_dspace);
	}
	printf("SIZE=%llu ALLOC=%llu FREE=%llu\n", (u_longlong_t)size,
	    (u_longlong_t)alloc, (u_longlong_t)freeb);
	printf("dspace=%llu slop=%llu embedded_log_space=%llu\n",
	    (u_longlong_t)spa_get_dspace(spa),
	    (u_longlong_t)spa_get_slop_space(spa),
	    (u_longlong_t)metaslab_class_get_space(spa_embedded_log_class(spa)));
	/* the classes' raw size and allocation; deflated allocation where the library has it */
	printf("special_space=%llu dedup_space=%llu log_space=%llu "
	    "special_alloc=%llu dedup_alloc=%llu\n",
	    (u_longlong_t)metaslab_class_get_space(spa_special_class(spa)),
	    (u_longlong_t)metaslab_class_get_space(spa_dedup_class(spa)),
	    (u_longlong_t)metaslab_class_get_space(spa_log_class(spa)),
	    (u_longlong_t)metaslab_class_get_alloc(spa_special_class(spa)),
	    (u_longlong_t)metaslab_class_get_alloc(spa_dedup_class(spa)));
#ifdef ZFS_DALLOC
	printf("class_dalloc=%llu\n", (u_longlong_t)(
	    metaslab_class_get_dalloc(spa_special_class(spa)) +
	    metaslab_class_get_dalloc(spa_dedup_class(spa))));
#endif
#ifdef ZFS_SPECIAL_ELOG
	printf("special_embedded_log_space=%llu\n", (u_longlong_t)
	    metaslab_class_get_space(spa_special_embedded_log_class(spa)));
#endif
	printf("USED=%llu AVAIL=%llu REFER=%llu\n", (u_longlong_t)used,
	    (u_longlong_t)avail, (u_longlong_t)refer);

	fnvlist_free(config);
	fnvlist_free(pp);
	fnvlist_free(ds);
	spa_close(spa, FTAG);
	if (keep)
		VERIFY0(spa_export(pool, NULL, B_FALSE, B_FALSE));
	else
		VERIFY0(spa_destroy(pool));
	kernel_fini();
	unlink(cfg);
	return (0);
}
