//! Tables the scan module's tests plan.

use std::collections::HashMap;
use std::path::Path;

use crate::spec::{DataContentType, NestedField, PartitionSpec, PrimitiveType, Schema, Type};
use crate::write::{empty_data_file, LocalTableWriter, NewEntry};

/// An unpartitioned table (`id long`) in `dir` whose one snapshot holds 20 manifests of 5
/// data files of 100 rows each (the files do not exist); the writer, to commit more.
pub(super) fn twenty_manifests(dir: &Path) -> LocalTableWriter {
    let schema = Schema::new(
        0,
        vec![NestedField::required(
            1,
            "id",
            Type::Primitive(PrimitiveType::Long),
        )],
    );
    let mut w =
        LocalTableWriter::create(dir, schema, PartitionSpec::unpartitioned(), HashMap::new())
            .expect("create");
    let snap = w.begin();
    let mut manifests = vec![];
    for m in 0..20 {
        let mut mw = w
            .manifest_writer(&snap, crate::spec::ManifestContent::Data)
            .expect("writer");
        for f in 0..5 {
            let mut file = empty_data_file(
                &format!("file:///nowhere/{m}-{f}.parquet"),
                DataContentType::Data,
            );
            file.record_count = 100;
            mw.add(&NewEntry::added(file)).expect("add");
        }
        manifests.push(w.write_manifest(&snap, mw).expect("write"));
    }
    w.commit(snap, manifests, "append").expect("commit");
    w
}

/// A commit of one equality delete file (on `id`) to the table `w` writes.
pub(super) fn add_equality_delete(w: &mut LocalTableWriter) {
    let mut delete = empty_data_file(
        "file:///nowhere/eq.parquet",
        DataContentType::EqualityDeletes,
    );
    delete.equality_ids = vec![1];
    w.row_delta(vec![], vec![delete]).expect("delete commit");
}
