/*
 * zexpand: RAID-Z expansion with the real OpenZFS code (userspace libzpool 2.3+): create one
 * raidz vdev on sparse files, optionally write MIB MiB of 128 KiB records, then attach each
 * NEWFILE in turn (spa_vdev_attach, as `zpool attach`), wait for the reflow (spa_wait) and for
 * the new metaslabs, and print what `zpool list -Hp` and `zfs list -Hp` show after each step.
 * The expansion judge beside the guest's kernel module (docs/capacity.md#raidz-expansion).
 *
 * usage: zexpand [-a ashift] [-w MIB] [-W MIB] POOL raidzP FILE... + NEWFILE...
 *   -W MIB writes that much more after the last attach (records of the new width).
 *   -F then writes 128 KiB records until the pool refuses one (ENOSPC): what really fits.
 *
 * Only nvlist and exported functions are used: the packaged headers do not match
 * the library's struct layouts (docs/test-guest.md#libzpool-oracle), so reaching into structs crashes.
 */
#include "zoracle.h"

static void report(const char *pool, spa_t *spa, const char *step);

/* Write 128 KiB records into a new object until a tx cannot get space; print how many fit. */
static void
fill_pool(const char *pool, spa_t *spa)
{
	const size_t bs = 128 * 1024;
	objset_t *os;
	VERIFY0(dmu_objset_own(pool, DMU_OST_ZFS, B_FALSE, B_FALSE, FTAG, &os));
	char *buf = malloc(bs);
	uint64_t x = 2463534242ULL;
	for (size_t j = 0; j < bs; j += 8) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		memcpy(buf + j, &x, 8);
	}
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_bonus(tx, DMU_NEW_OBJECT);
	VERIFY0(dmu_tx_assign(tx, ZS_TX_WAIT));
	uint64_t obj = dmu_object_alloc(os, DMU_OT_UINT64_OTHER, bs, DMU_OT_NONE, 0, tx);
	dmu_tx_commit(tx);
	uint64_t off = 0;
	int err = 0;
	for (;;) {
		memcpy(buf, &off, sizeof (off));
		tx = dmu_tx_create(os);
		dmu_tx_hold_write(tx, obj, off, bs);
		if ((err = dmu_tx_assign(tx, ZS_TX_WAIT)) != 0) {
			dmu_tx_abort(tx);
			/* a refusal may only mean the space is still reserved by the open txg */
			txg_wait_synced(spa_get_dsl(spa), 0);
			tx = dmu_tx_create(os);
			dmu_tx_hold_write(tx, obj, off, bs);
			if ((err = dmu_tx_assign(tx, ZS_TX_WAIT)) != 0) {
				dmu_tx_abort(tx);
				break;
			}
		}
		ZS_DMU_WRITE(os, obj, off, bs, buf, tx);
		dmu_tx_commit(tx);
		off += bs;
	}
	txg_wait_synced(spa_get_dsl(spa), 0);
	printf("FILL records=%llu error=%d\n", (u_longlong_t)(off / bs), err);
	dmu_objset_disown(os, B_FALSE, FTAG);
	free(buf);
	report(pool, spa, "full");
}

static uint64_t
prop(nvlist_t *pp, zpool_prop_t p)
{
	return (fnvlist_lookup_uint64(fnvlist_lookup_nvlist(pp,
	    zpool_prop_to_name(p)), "value"));
}

static void
pool_props(spa_t *spa, uint64_t *size, uint64_t *alloc, uint64_t *freeb)
{
#ifdef ZFS_23
	nvlist_t *pp = fnvlist_alloc();
	VERIFY0(spa_prop_get(spa, pp));
#else
	nvlist_t *pp = NULL;
	VERIFY0(spa_prop_get(spa, &pp));
#endif
	*size = prop(pp, ZPOOL_PROP_SIZE);
	*alloc = prop(pp, ZPOOL_PROP_ALLOCATED);
	*freeb = prop(pp, ZPOOL_PROP_FREE);
	fnvlist_free(pp);
}

static void
report(const char *pool, spa_t *spa, const char *step)
{
	txg_wait_synced(spa_get_dsl(spa), 0);
	objset_t *os;
	VERIFY0(dmu_objset_hold(pool, FTAG, &os));
	nvlist_t *ds = fnvlist_alloc();
	dmu_objset_stats(os, ds);
	dmu_objset_rele(os, FTAG);
	uint64_t used = fnvlist_lookup_uint64(fnvlist_lookup_nvlist(ds,
	    zfs_prop_to_name(ZFS_PROP_USED)), "value");
	uint64_t avail = fnvlist_lookup_uint64(fnvlist_lookup_nvlist(ds,
	    zfs_prop_to_name(ZFS_PROP_AVAILABLE)), "value");
	fnvlist_free(ds);
	uint64_t size, alloc, freeb;
	pool_props(spa, &size, &alloc, &freeb);
	printf("STEP=%s SIZE=%llu ALLOC=%llu FREE=%llu USED=%llu AVAIL=%llu "
	    "dspace=%llu slop=%llu\n", step, (u_longlong_t)size,
	    (u_longlong_t)alloc, (u_longlong_t)freeb, (u_longlong_t)used,
	    (u_longlong_t)avail, (u_longlong_t)spa_get_dspace(spa),
	    (u_longlong_t)spa_get_slop_space(spa));
	fflush(stdout);
}

static uint64_t
top_guid(spa_t *spa)
{
	spa_config_enter(spa, SCL_ALL, FTAG, RW_READER);
	nvlist_t *config = spa_config_generate(spa, NULL, -1ULL, B_TRUE);
	spa_config_exit(spa, SCL_ALL, FTAG);
	nvlist_t *tree = fnvlist_lookup_nvlist(config, ZPOOL_CONFIG_VDEV_TREE);
	nvlist_t **child;
	uint_t nchild;
	VERIFY0(nvlist_lookup_nvlist_array(tree, ZPOOL_CONFIG_CHILDREN, &child,
	    &nchild));
	uint64_t guid = fnvlist_lookup_uint64(child[0], ZPOOL_CONFIG_GUID);
	fnvlist_free(config);
	return (guid);
}

int
main(int argc, char **argv)
{
	int opt;
	long write_mib = 0, write_after_mib = 0;
	int fill = 0;
	while ((opt = getopt(argc, argv, "a:w:W:F")) != -1) {
		if (opt == 'a')
			ashift = atoi(optarg);
		else if (opt == 'w')
			write_mib = atol(optarg);
		else if (opt == 'W')
			write_after_mib = atol(optarg);
		else if (opt == 'F')
			fill = 1;
		else
			return (2);
	}
	if (argc - optind < 4 || strncmp(argv[optind + 1], "raidz", 5) != 0) {
		fprintf(stderr, "usage: zexpand [-a ashift] [-w MIB] [-W MIB] POOL raidzP FILE... + NEWFILE...\n");
		return (2);
	}
	const char *pool = argv[optind++];
	const char *kind = argv[optind++];
	nvlist_t *leaves[MAXLEAF];
	int nleaf = 0, i = optind;
	while (i < argc && strcmp(argv[i], "+") != 0 && nleaf < MAXLEAF)
		leaves[nleaf++] = make_leaf(argv[i++]);
	int first_new = (i < argc) ? i + 1 : argc;

	nvlist_t *top = fnvlist_alloc();
	fnvlist_add_uint64(top, ZPOOL_CONFIG_IS_LOG, 0);
	fnvlist_add_string(top, ZPOOL_CONFIG_TYPE, VDEV_TYPE_RAIDZ);
	fnvlist_add_uint64(top, ZPOOL_CONFIG_NPARITY,
	    kind[5] ? strtoull(kind + 5, NULL, 10) : 1);
	fnvlist_add_nvlist_array(top, ZPOOL_CONFIG_CHILDREN, NVLIST_ARRAY(leaves), nleaf);
	nvlist_t *root = fnvlist_alloc();
	fnvlist_add_string(root, ZPOOL_CONFIG_TYPE, VDEV_TYPE_ROOT);
	fnvlist_add_nvlist_array(root, ZPOOL_CONFIG_CHILDREN, NVLIST_ARRAY(&top), 1);

	char cfg[] = "/tmp/zexpand-cache-XXXXXX";
	int fd = mkstemp(cfg);
	if (fd < 0)
		return (1);
	close(fd);
	spa_config_path = cfg;
	kernel_init(SPA_MODE_READ | SPA_MODE_WRITE);
	nvlist_t *props = fnvlist_alloc();
	for (int f = 0; f < SPA_FEATURES; f++) {
		char name[256];
		snprintf(name, sizeof (name), "feature@%s", spa_feature_table[f].fi_uname);
		fnvlist_add_uint64(props, name, 0);
	}
	int err = spa_create(pool, root, props, NULL, NULL);
	if (err != 0) {
		fprintf(stderr, "zexpand: spa_create failed: error %d\n", err);
		return (1);
	}
	spa_t *spa;
	VERIFY0(spa_open(pool, &spa, FTAG));
	txg_wait_synced(spa_get_dsl(spa), 0);
	if (write_mib > 0)
		write_records(pool, spa, write_mib, 128 * 1024);
	report(pool, spa, "created");

	for (int n = first_new; n < argc; n++) {
		uint64_t before, a, f;
		pool_props(spa, &before, &a, &f);
		nvlist_t *leaf = make_leaf(argv[n]);
		nvlist_t *nvroot = fnvlist_alloc();
		fnvlist_add_string(nvroot, ZPOOL_CONFIG_TYPE, VDEV_TYPE_ROOT);
		fnvlist_add_nvlist_array(nvroot, ZPOOL_CONFIG_CHILDREN, NVLIST_ARRAY(&leaf), 1);
		err = spa_vdev_attach(spa, top_guid(spa), nvroot, B_FALSE, B_FALSE);
		if (err != 0) {
			fprintf(stderr, "zexpand: spa_vdev_attach %s failed: error %d\n", argv[n], err);
			return (1);
		}
		boolean_t waited;
		VERIFY0(spa_wait(pool, ZPOOL_WAIT_RAIDZ_EXPAND, &waited));
		/* the new metaslabs come just after, from vdev_online(ZFS_ONLINE_EXPAND) */
		uint64_t size = before;
		for (int t = 0; t < 6000 && size == before; t++) {
			txg_wait_synced(spa_get_dsl(spa), 0);
			pool_props(spa, &size, &a, &f);
		}
		char step[32];
		snprintf(step, sizeof (step), "+%d", n - first_new + 1);
		report(pool, spa, step);
		fnvlist_free(nvroot);
		fnvlist_free(leaf);
	}
	if (write_after_mib > 0) {
		write_records(pool, spa, write_after_mib, 128 * 1024);
		report(pool, spa, "written-after");
	}
	if (fill)
		fill_pool(pool, spa);
	spa_close(spa, FTAG);
	VERIFY0(spa_destroy(pool));
	kernel_fini();
	unlink(cfg);
	return (0);
}
