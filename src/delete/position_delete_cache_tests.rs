//! Unit tests of the byte-bounded position delete cache (the loader's use of it is tested
//! in `position_delete_tests.rs`, scans of real tables in `tests/integration/session_caches.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use roaring::RoaringTreemap;

use super::*;

/// `n` sparse positions (one every 100 rows): an array container, 2 bytes a position.
fn sparse(n: u64) -> Arc<RoaringTreemap> {
    Arc::new((0..n).map(|i| i * 100).collect())
}

#[test]
fn estimates_follow_the_bitmaps_and_keys() {
    let positions = sparse(1000);
    let size = positions.serialized_size() as u64;
    assert!(size >= 2000, "{size}");
    assert_eq!(
        vector_bytes("p.puffin", &positions),
        ENTRY_OVERHEAD + 8 + size
    );
    let file = PositionDeleteFile {
        by_data_file: HashMap::from([
            ("a".to_string(), (*positions).clone()),
            ("bb".to_string(), (*sparse(10)).clone()),
        ]),
        rows: 1010,
    };
    let ten = sparse(10).serialized_size() as u64;
    assert_eq!(
        file_bytes("d.parquet", &file),
        ENTRY_OVERHEAD + 9 + (1 + size + DATA_FILE_OVERHEAD) + (2 + ten + DATA_FILE_OVERHEAD)
    );
}

#[test]
fn a_hit_is_the_same_value() {
    let cache = PositionDeleteCache::default();
    assert_eq!(cache.max_bytes(), DEFAULT_POSITION_DELETE_CACHE_BYTES);
    let dv = sparse(50);
    cache.insert_deletion_vector("s3://b/t/dv.puffin", 4, 120, Arc::clone(&dv));
    let hit = cache
        .get_deletion_vector("s3://b/t/dv.puffin", 4, 120)
        .expect("cached");
    assert!(Arc::ptr_eq(&hit, &dv));
    // another blob of the same Puffin file, or the same offset with another length, is
    // another key
    assert!(cache
        .get_deletion_vector("s3://b/t/dv.puffin", 124, 120)
        .is_none());
    assert!(cache
        .get_deletion_vector("s3://b/t/dv.puffin", 4, 121)
        .is_none());
    let file = Arc::new(PositionDeleteFile {
        by_data_file: HashMap::from([("data".to_string(), (*sparse(3)).clone())]),
        rows: 3,
    });
    cache.insert_position_delete_file("s3://b/t/d.parquet", Arc::clone(&file));
    let hit = cache
        .get_position_delete_file("s3://b/t/d.parquet")
        .expect("cached");
    assert!(Arc::ptr_eq(&hit, &file));
    // the two kinds never answer for each other
    assert!(cache
        .get_position_delete_file("s3://b/t/dv.puffin")
        .is_none());
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.entries, s.evictions), (2, 3, 2, 0));
    assert_eq!(
        s.bytes,
        vector_bytes("s3://b/t/dv.puffin", &dv) + file_bytes("s3://b/t/d.parquet", &file)
    );
    cache.clear();
    assert!(cache
        .get_position_delete_file("s3://b/t/d.parquet")
        .is_none());
    assert_eq!(cache.stats().bytes, 0);
}

#[test]
fn evicts_least_recently_used_beyond_the_byte_budget() {
    let dv = sparse(1000);
    let one = vector_bytes("a", &dv);
    // room for two values, not three
    let cache = PositionDeleteCache::new(2 * one + one / 2);
    cache.insert_deletion_vector("a", 0, 10, Arc::clone(&dv));
    cache.insert_deletion_vector("b", 0, 10, Arc::clone(&dv));
    assert!(cache.get_deletion_vector("a", 0, 10).is_some()); // a is now newer than b
    cache.insert_deletion_vector("c", 0, 10, Arc::clone(&dv));
    assert!(cache.get_deletion_vector("b", 0, 10).is_none());
    assert!(cache.get_deletion_vector("a", 0, 10).is_some());
    assert!(cache.get_deletion_vector("c", 0, 10).is_some());
    let s = cache.stats();
    assert_eq!((s.entries, s.bytes, s.evictions), (2, 2 * one, 1));
    // replacing a key does not count it twice
    cache.insert_deletion_vector("c", 0, 10, Arc::clone(&dv));
    assert_eq!(cache.stats().bytes, 2 * one);
    // a value as large as two evicts both older ones
    let big = sparse(2600);
    let big_bytes = vector_bytes("big", &big);
    assert!(big_bytes > 2 * one && big_bytes <= 2 * one + one / 2);
    cache.insert_deletion_vector("big", 0, 10, Arc::clone(&big));
    let s = cache.stats();
    assert_eq!((s.entries, s.bytes, s.evictions), (1, big_bytes, 3));
    assert!(cache.get_deletion_vector("big", 0, 10).is_some());
}

#[test]
fn a_value_larger_than_the_budget_is_not_kept() {
    let small = sparse(10);
    let small_bytes = vector_bytes("small", &small);
    let cache = PositionDeleteCache::new(small_bytes + 100);
    cache.insert_deletion_vector("small", 0, 10, Arc::clone(&small));
    let huge = Arc::new(PositionDeleteFile {
        by_data_file: HashMap::from([("data".to_string(), (*sparse(1000)).clone())]),
        rows: 1000,
    });
    cache.insert_position_delete_file("huge", huge);
    assert!(cache.get_position_delete_file("huge").is_none());
    // nothing was evicted for it
    assert!(cache.get_deletion_vector("small", 0, 10).is_some());
    let s = cache.stats();
    assert_eq!((s.entries, s.bytes, s.evictions), (1, small_bytes, 0));
    // a budget of 0 keeps nothing
    let none = PositionDeleteCache::new(0);
    none.insert_deletion_vector("small", 0, 10, small);
    assert!(none.get_deletion_vector("small", 0, 10).is_none());
    assert_eq!(none.stats().entries, 0);
}

#[test]
fn resolved_equality_deletes_are_keyed_by_the_data_file_and_the_set_of_delete_files() {
    let cache = PositionDeleteCache::default();
    let positions = sparse(20);
    let deletes = [
        "s3://b/t/eq-2.parquet".to_string(),
        "s3://b/t/eq-1.parquet".to_string(),
    ];
    cache.insert_resolved_equality_deletes("s3://b/t/d.parquet", &deletes, Arc::clone(&positions));
    // the order of the delete files does not matter
    let reversed = [deletes[1].clone(), deletes[0].clone()];
    let hit = cache
        .get_resolved_equality_deletes("s3://b/t/d.parquet", &reversed)
        .expect("cached");
    assert!(Arc::ptr_eq(&hit, &positions));
    // one delete file fewer or more, or another data file, is another key
    assert!(cache
        .get_resolved_equality_deletes("s3://b/t/d.parquet", &deletes[..1])
        .is_none());
    let more = [
        deletes[0].clone(),
        deletes[1].clone(),
        "s3://b/t/eq-3.parquet".into(),
    ];
    assert!(cache
        .get_resolved_equality_deletes("s3://b/t/d.parquet", &more)
        .is_none());
    assert!(cache
        .get_resolved_equality_deletes("s3://b/t/e.parquet", &deletes)
        .is_none());
    // a deletion vector at the data file's location is not its resolved deletes
    assert!(cache
        .get_deletion_vector("s3://b/t/d.parquet", 0, 0)
        .is_none());
    let stats = cache.stats();
    assert_eq!(stats.entries, 1);
    let names = ("s3://b/t/d.parquet".len() + 2 * "s3://b/t/eq-1.parquet".len()) as u64;
    assert_eq!(
        stats.bytes,
        ENTRY_OVERHEAD + names + positions.serialized_size() as u64
    );
}

#[test]
fn planned_deletes_are_keyed_by_the_data_file_its_row_count_and_the_set_of_delete_files() {
    let cache = PositionDeleteCache::new(1 << 20);
    let planned = PositionDeletes::new((*sparse(100)).clone(), 10_000);
    let keys = [
        "d1.puffin@Some(4)+Some(40)".to_string(),
        "p.parquet@None+None".to_string(),
    ];
    cache.insert_planned("a.parquet", 10_000, &keys, planned.clone());
    // any order of the delete files, the same entry: the same bitmap, and the live-row
    // bits one scan builds are the ones the next one gets
    let reversed = [keys[1].clone(), keys[0].clone()];
    let hit = cache
        .get_planned("a.parquet", 10_000, &reversed)
        .expect("kept");
    assert!(Arc::ptr_eq(&hit.deleted, &planned.deleted));
    let live = hit.live_rows().expect("bits");
    let again = cache.get_planned("a.parquet", 10_000, &keys).expect("kept");
    assert_eq!(
        again.live_rows().expect("bits").values().as_ptr(),
        live.values().as_ptr()
    );
    // another data file, row count or set of delete files is another entry
    assert!(cache.get_planned("b.parquet", 10_000, &keys).is_none());
    assert!(cache.get_planned("a.parquet", 10_001, &keys).is_none());
    assert!(cache.get_planned("a.parquet", 10_000, &keys[..1]).is_none());
    // fragmented (100 runs in 10,000 rows): counted with its live-row bits from the
    // start; deletes in one run are counted without (applied as a row selection)
    assert!(planned.fragmented);
    let names = "a.parquet".len() + "10000".len() + keys[0].len() + keys[1].len();
    assert_eq!(
        cache.stats().bytes,
        ENTRY_OVERHEAD + names as u64 + planned.deleted.serialized_size() as u64 + 1250
    );
    let run = PositionDeletes::new((0..100).collect(), 10_000);
    assert!(!run.fragmented);
    cache.clear();
    cache.insert_planned("a.parquet", 10_000, &keys, run.clone());
    assert_eq!(
        cache.stats().bytes,
        ENTRY_OVERHEAD + names as u64 + run.deleted.serialized_size() as u64
    );
}

/// The cache counts live-row bits only for fragmented planned deletes; a scan that
/// applies non-fragmented ones per batch anyway (`icefloe.position_deletes = 'filter'`)
/// builds their bits, which must not stay in the cache uncounted (a table of many large
/// files with a few deletes each would hold `rows / 8` bytes per file beyond the
/// budget).
#[test]
fn planned_deletes_hold_no_live_rows_beyond_what_the_cache_counts() {
    let cache = PositionDeleteCache::new(1 << 30);
    let keys = ["p.parquet@None+None".to_string()];
    let rows = 1_500_000;
    let run = PositionDeletes::new((0..100).collect(), rows);
    assert!(!run.fragmented);
    cache.insert_planned("a.parquet", rows, &keys, run);
    let counted = cache.stats().bytes;
    let hit = cache.get_planned("a.parquet", rows, &keys).expect("kept");
    let live = hit.live_rows().expect("bits");
    assert_eq!(live.len(), rows as usize);
    assert_eq!(live.count_set_bits(), rows as usize - 100);
    let names = "a.parquet".len() + rows.to_string().len() + keys[0].len();
    let held = cache.get_planned("a.parquet", rows, &keys).expect("kept");
    assert_eq!(
        ENTRY_OVERHEAD + names as u64 + held.estimated_bytes(false),
        counted,
        "the cache holds bits it does not count"
    );
}
