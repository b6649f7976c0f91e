//! The writing node of [`IcebergPhysicalCodec`]: [`IcebergDataFileWriterExec`] (what
//! writing needs, its row schema and its sort).

use super::*;

/// One term of a writer's sort: its expression is in `EncodedNode::values`.
#[derive(Serialize, Deserialize)]
struct SortTermState {
    descending: bool,
    nulls_first: bool,
}

#[derive(Serialize, Deserialize)]
struct WriterState {
    table: String,
    file_io: FileIoState,
    data_location: String,
    schema: Schema,
    spec: PartitionSpec,
    properties: BTreeMap<String, String>,
    format_version: u8,
    sort_order_id: Option<i32>,
    #[serde(default)]
    sorted_field_ids: Vec<i32>,
    operation_id: String,
    /// The sort's terms (`None`: unsorted).
    sort: Option<Vec<SortTermState>>,
}

impl IcebergPhysicalCodec {
    pub(super) fn encode_data_file_writer(
        &self,
        exec: &IcebergDataFileWriterExec,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<EncodedNode> {
        let state = exec.state();
        let mut values =
            vec![protobuf::Schema::try_from(exec.row_schema().as_ref())?.encode_to_vec()];
        let sort = match exec.sort() {
            None => None,
            Some(sort) => {
                let mut terms = Vec::with_capacity(sort.len());
                for req in sort.iter() {
                    values.push(
                        proto_converter
                            .physical_expr_to_proto(&req.expr, self)?
                            .encode_to_vec(),
                    );
                    let options = req.options.unwrap_or_default();
                    terms.push(SortTermState {
                        descending: options.descending,
                        nulls_first: options.nulls_first,
                    });
                }
                Some(terms)
            }
        };
        let writer = WriterState {
            table: state.table.clone(),
            file_io: FileIoState::of(&state.file_io),
            data_location: state.data_location.clone(),
            schema: state.schema.clone(),
            spec: state.spec.clone(),
            properties: state
                .properties
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            format_version: state.format_version as u8,
            sort_order_id: state.sort_order_id,
            sorted_field_ids: state.sorted_field_ids.clone(),
            operation_id: state.operation_id.clone(),
            sort,
        };
        Ok(EncodedNode {
            kind: DATA_FILE_WRITER.to_string(),
            state: to_json(&writer)?,
            plan: vec![],
            values,
            predicate: None,
            projection: None,
            id_columns: None,
        })
    }

    pub(super) fn decode_data_file_writer(
        &self,
        node: &EncodedNode,
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let [input] = inputs else {
            return Err(codec_error("IcebergDataFileWriterExec takes one input"));
        };
        let writer: WriterState = from_json(&node.state)?;
        let Some((row_schema, exprs)) = node.values.split_first() else {
            return Err(codec_error(
                "IcebergDataFileWriterExec without its row schema",
            ));
        };
        let row_schema: protobuf::Schema = decode_message(row_schema, "row schema")?;
        let row_schema = Arc::new(ArrowSchema::try_from(&row_schema)?);
        let sort = match writer.sort {
            None => None,
            Some(terms) => {
                if terms.len() != exprs.len() {
                    return Err(codec_error(
                        "sort terms and sort expressions differ in number",
                    ));
                }
                let decode_ctx = PhysicalPlanDecodeContext::new(ctx, self);
                let mut reqs = Vec::with_capacity(terms.len());
                for (term, bytes) in terms.into_iter().zip(exprs) {
                    let expr: protobuf::PhysicalExprNode = decode_message(bytes, "sort term")?;
                    let expr = proto_converter.proto_to_physical_expr(
                        &expr,
                        input.schema().as_ref(),
                        &decode_ctx,
                    )?;
                    reqs.push(PhysicalSortRequirement::new(
                        expr,
                        Some(SortOptions {
                            descending: term.descending,
                            nulls_first: term.nulls_first,
                        }),
                    ));
                }
                LexRequirement::new(reqs)
            }
        };
        let format_version = match writer.format_version {
            1 => FormatVersion::V1,
            2 => FormatVersion::V2,
            3 => FormatVersion::V3,
            other => return Err(codec_error(format!("unknown format version {other}"))),
        };
        let state = DataFileWriteState {
            table: writer.table,
            file_io: writer.file_io.rebuild()?,
            data_location: writer.data_location,
            schema: writer.schema,
            spec: writer.spec,
            properties: writer.properties.into_iter().collect(),
            format_version,
            sort_order_id: writer.sort_order_id,
            sorted_field_ids: writer.sorted_field_ids,
            operation_id: writer.operation_id,
        };
        Ok(Arc::new(IcebergDataFileWriterExec::new(
            Arc::clone(input),
            Arc::new(state),
            row_schema,
            sort,
        )))
    }
}
