//! The delete nodes of [`IcebergPhysicalCodec`]: [`PositionDeleteExec`] (each file's
//! deleted positions as serialized roaring bitmaps, and the filters it took over) and [`EqualityDeleteExec`] (its
//! delete files, scopes, key schemas and pre-probe predicate).

use super::*;

/// A [`PositionDeleteExec`] besides its input (the positions in `EncodedNode::values`,
/// one per file with deletes, in order).
#[derive(Serialize, Deserialize)]
struct PositionDeleteState {
    pos_column: usize,
    file_column: usize,
    /// Per file index, its row count if it has deletes.
    files: Vec<Option<u64>>,
}

/// An equality delete file as the loader and the probe use it.
#[derive(Serialize, Deserialize)]
struct EqualityFileState {
    file_path: String,
    file_size_in_bytes: i64,
    record_count: i64,
    equality_ids: Vec<i32>,
    snapshot_id: i64,
    data_sequence_number: i64,
    file_sequence_number: i64,
    spec_id: i32,
    scope: i32,
}

#[derive(Serialize, Deserialize)]
struct EqualityGroupState {
    input_columns: Vec<usize>,
    files: Vec<EqualityFileState>,
}

#[derive(Serialize, Deserialize)]
struct EqualityState {
    file_io: FileIoState,
    groups: Vec<EqualityGroupState>,
    sequence_column: usize,
    scope_column: usize,
    output_columns: Vec<usize>,
}

impl IcebergPhysicalCodec {
    /// A delete node's predicate as an encoded `PhysicalExprNode`.
    fn encode_predicate(
        &self,
        predicate: Option<&Arc<dyn PhysicalExpr>>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Option<Vec<u8>>> {
        predicate
            .map(|p| {
                Ok::<_, DataFusionError>(
                    proto_converter
                        .physical_expr_to_proto(p, self)?
                        .encode_to_vec(),
                )
            })
            .transpose()
    }

    /// The predicate of an encoded delete node, bound to `schema`.
    fn decode_predicate(
        &self,
        node: &EncodedNode,
        schema: &datafusion::arrow::datatypes::SchemaRef,
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Option<Arc<dyn PhysicalExpr>>> {
        let Some(bytes) = &node.predicate else {
            return Ok(None);
        };
        let expr: protobuf::PhysicalExprNode = decode_message(bytes, "predicate")?;
        let decode_ctx = PhysicalPlanDecodeContext::new(ctx, self);
        Ok(Some(proto_converter.proto_to_physical_expr(
            &expr,
            schema.as_ref(),
            &decode_ctx,
        )?))
    }

    pub(super) fn encode_position_deletes(
        &self,
        exec: &PositionDeleteExec,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<EncodedNode> {
        let (pos_column, file_column) = exec.columns();
        let mut files = vec![];
        let mut values = vec![];
        for file in exec.files() {
            files.push(file.as_ref().map(|f| f.total_rows()));
            if let Some(f) = file {
                let mut bytes = Vec::with_capacity(f.deleted.serialized_size());
                f.deleted
                    .serialize_into(&mut bytes)
                    .map_err(|e| codec_error(format!("serializing deleted positions: {e}")))?;
                values.push(bytes);
            }
        }
        let state = PositionDeleteState {
            pos_column,
            file_column,
            files,
        };
        let predicate = self.encode_predicate(exec.predicate(), proto_converter)?;
        Ok(EncodedNode {
            kind: POSITION_DELETES.to_string(),
            state: to_json(&state)?,
            plan: vec![],
            values,
            predicate,
            projection: None,
            id_columns: None,
        })
    }

    pub(super) fn decode_position_deletes(
        &self,
        node: &EncodedNode,
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let [input] = inputs else {
            return Err(codec_error("PositionDeleteExec takes one input"));
        };
        let state: PositionDeleteState = from_json(&node.state)?;
        let mut values = node.values.iter();
        let mut files = Vec::with_capacity(state.files.len());
        for total in state.files {
            files.push(match total {
                None => None,
                Some(total) => {
                    let bytes = values
                        .next()
                        .ok_or_else(|| codec_error("fewer deleted-position sets than files"))?;
                    let deleted = RoaringTreemap::deserialize_from(bytes.as_slice())
                        .map_err(|e| codec_error(format!("deleted positions: {e}")))?;
                    Some(FileDeletes::try_new(Arc::new(deleted), total)?)
                }
            });
        }
        if values.next().is_some() {
            return Err(codec_error("more deleted-position sets than files"));
        }
        let exec = PositionDeleteExec::try_new(
            Arc::clone(input),
            Arc::new(files),
            state.pos_column,
            state.file_column,
        )?;
        // the predicate is on the node's output schema
        let predicate = self.decode_predicate(node, &exec.schema(), ctx, proto_converter)?;
        Ok(Arc::new(exec.with_predicate(predicate)))
    }

    pub(super) fn encode_equality_deletes(
        &self,
        exec: &EqualityDeleteExec,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<EncodedNode> {
        let parts = exec.parts();
        let mut groups = Vec::with_capacity(parts.groups.len());
        let mut values = Vec::with_capacity(parts.groups.len());
        for group in parts.groups {
            let mut files = Vec::with_capacity(group.files.len());
            for file in &group.files {
                let data_file = &file.entry.data_file;
                if data_file.file_format != DataFileFormat::Parquet {
                    return Err(not_supported(
                        &format!("equality delete file '{}'", data_file.file_path),
                        "only Parquet equality delete files are read",
                    ));
                }
                files.push(EqualityFileState {
                    file_path: data_file.file_path.clone(),
                    file_size_in_bytes: data_file.file_size_in_bytes,
                    record_count: data_file.record_count,
                    equality_ids: data_file.equality_ids.clone(),
                    snapshot_id: file.entry.snapshot_id,
                    data_sequence_number: file.entry.data_sequence_number,
                    file_sequence_number: file.entry.file_sequence_number,
                    spec_id: file.entry.spec_id,
                    scope: file.scope,
                });
            }
            groups.push(EqualityGroupState {
                input_columns: group.input_columns.clone(),
                files,
            });
            values.push(protobuf::Schema::try_from(group.key_schema.as_ref())?.encode_to_vec());
        }
        let predicate = self.encode_predicate(parts.predicate, proto_converter)?;
        let state = EqualityState {
            file_io: FileIoState::of(parts.loader.file_io()),
            groups,
            sequence_column: parts.sequence_column,
            scope_column: parts.scope_column,
            output_columns: parts.output_columns.to_vec(),
        };
        Ok(EncodedNode {
            kind: EQUALITY_DELETES.to_string(),
            state: to_json(&state)?,
            plan: vec![],
            values,
            predicate,
            projection: None,
            id_columns: None,
        })
    }

    pub(super) fn decode_equality_deletes(
        &self,
        node: &EncodedNode,
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let [input] = inputs else {
            return Err(codec_error("EqualityDeleteExec takes one input"));
        };
        let state: EqualityState = from_json(&node.state)?;
        if state.groups.len() != node.values.len() {
            return Err(codec_error(
                "equality delete groups and key schemas differ in number",
            ));
        }
        let mut groups = Vec::with_capacity(state.groups.len());
        for (group, schema) in state.groups.into_iter().zip(&node.values) {
            let schema: protobuf::Schema = decode_message(schema, "equality key schema")?;
            let key_schema = Arc::new(ArrowSchema::try_from(&schema)?);
            let files = group
                .files
                .into_iter()
                .map(|f| EqualityDeleteFile {
                    entry: Arc::new(ManifestEntry {
                        status: ManifestStatus::Existing,
                        snapshot_id: f.snapshot_id,
                        data_sequence_number: f.data_sequence_number,
                        file_sequence_number: f.file_sequence_number,
                        spec_id: f.spec_id,
                        data_file: DataFile {
                            record_count: f.record_count,
                            file_size_in_bytes: f.file_size_in_bytes,
                            equality_ids: f.equality_ids,
                            ..empty_data_file(&f.file_path, DataContentType::EqualityDeletes)
                        },
                    }),
                    scope: f.scope,
                })
                .collect();
            groups.push(EqualityGroup {
                key_schema,
                input_columns: group.input_columns,
                files,
            });
        }
        let predicate = self.decode_predicate(node, &input.schema(), ctx, proto_converter)?;
        let loader = Arc::new(EqualityDeleteLoader::new(state.file_io.rebuild()?));
        Ok(Arc::new(EqualityDeleteExec::try_new(
            Arc::clone(input),
            groups,
            loader,
            predicate,
            state.sequence_column,
            state.scope_column,
            state.output_columns,
        )?))
    }
}
