/*
 * zoracle.h: what the libzpool oracles zspace.c and zexpand.c share: the headers, the API
 * differences between the libraries they build against, a file vdev leaf, and writing
 * incompressible 128 KiB records. Each .c includes it once; tests/oracle/harness.py copies it
 * beside the source it compiles.
 */
#include <sys/zfs_context.h>
#include <sys/spa.h>
#include <sys/dmu.h>
#include <sys/metaslab.h>
#include <sys/fs/zfs.h>
#include <libnvpair.h>
#include <zfeature_common.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

extern char *spa_config_path;

/*
 * API differences between the libraries the oracle builds against; tests/oracle/harness.py
 * reads the headers and sets: -DZFS_23 when spa_prop_get() fills a caller's nvlist (2.3+),
 * -DZFS_DMU_TX_WAIT when dmu_tx_assign() takes DMU_TX_WAIT instead of TXG_WAIT (2.3.9, 2.4),
 * -DZFS_DMU_WRITE_FLAGS when dmu_write() takes a dmu_flags_t (2.4),
 * -DZFS_DALLOC when metaslab_class_get_dalloc() exists (2.3+: the deflated bytes a class holds),
 * -DZFS_SPECIAL_ELOG when spa_special_embedded_log_class() exists (2.4).
 */
#ifdef ZFS_DMU_TX_WAIT
#define	ZS_TX_WAIT	DMU_TX_WAIT
#else
#define	ZS_TX_WAIT	TXG_WAIT
#endif
#ifdef ZFS_DMU_WRITE_FLAGS
#define	ZS_DMU_WRITE(os, obj, off, len, buf, tx)	\
	dmu_write(os, obj, off, len, buf, tx, 0)
#else
#define	ZS_DMU_WRITE(os, obj, off, len, buf, tx)	\
	dmu_write(os, obj, off, len, buf, tx)
#endif
/* 2.3+ declare nvlist arrays `const nvlist_t * const *`, 2.1 `nvlist_t **`; gcc 14 errs on a mismatch */
#define	NVLIST_ARRAY(a)	((void *)(a))

#define MAXTOP 256
#define MAXLEAF 256

static int ashift = 0;

static double
cpu_seconds(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return (r.ru_utime.tv_sec + r.ru_stime.tv_sec +
	    1e-6 * (r.ru_utime.tv_usec + r.ru_stime.tv_usec));
}

/* Write `mib` MiB of 128 KiB records, one tx each, and wait until they are synced. */
static void
write_records(const char *pool, spa_t *spa, long mib, size_t bs)
{
	objset_t *os;
	/* own, not hold: a hold keeps the pool config locked and tx assignment asserts */
	VERIFY0(dmu_objset_own(pool, DMU_OST_ZFS, B_FALSE, B_FALSE, FTAG, &os));
	char *buf = malloc(bs);
	uint64_t x = 88172645463325252ULL;	/* xorshift: incompressible, never zero */
	for (size_t j = 0; j < bs; j += 8) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		memcpy(buf + j, &x, 8);
	}
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_bonus(tx, DMU_NEW_OBJECT);
	VERIFY0(dmu_tx_assign(tx, ZS_TX_WAIT));
	uint64_t obj = dmu_object_alloc(os, DMU_OT_UINT64_OTHER, bs,
	    DMU_OT_NONE, 0, tx);
	dmu_tx_commit(tx);
	uint64_t total = (uint64_t)mib << 20;
	double t0 = cpu_seconds();
	for (uint64_t off = 0; off < total; off += bs) {
		memcpy(buf, &off, sizeof (off));	/* no two records alike */
		tx = dmu_tx_create(os);
		dmu_tx_hold_write(tx, obj, off, bs);
		VERIFY0(dmu_tx_assign(tx, ZS_TX_WAIT));
		ZS_DMU_WRITE(os, obj, off, bs, buf, tx);
		dmu_tx_commit(tx);
	}
	txg_wait_synced(spa_get_dsl(spa), 0);
	printf("WRITE records=%llu record_bytes=%zu cpu_s=%.4f\n",
	    (u_longlong_t)(total / bs), bs, cpu_seconds() - t0);
	dmu_objset_disown(os, B_FALSE, FTAG);
	free(buf);
}

static nvlist_t *
make_leaf(const char *path)
{
	nvlist_t *nv = fnvlist_alloc();
	fnvlist_add_string(nv, ZPOOL_CONFIG_TYPE, VDEV_TYPE_FILE);
	fnvlist_add_string(nv, ZPOOL_CONFIG_PATH, path);
	fnvlist_add_uint64(nv, ZPOOL_CONFIG_WHOLE_DISK, 0);
	if (ashift)
		fnvlist_add_uint64(nv, ZPOOL_CONFIG_ASHIFT, ashift);
	return (nv);
}
