//! Projecting a row filter onto a partition spec (Java: `Projections`,
//! `InclusiveProjection`, `StrictProjection`).
//!
//! Each leaf is projected through every partition field whose source is the leaf's column
//! ([`crate::transform::project_inclusive`] / [`project_strict`](crate::transform::project_strict)).
//! Inclusively, the projections of one leaf are ANDed (each must hold) and a leaf with
//! none becomes `true`; strictly they are ORed (any suffices) and a leaf with none becomes
//! `false`. `Not` is rewritten away first.

use super::super::transform::{project_inclusive, project_strict};
use crate::error::{Error, Result};
use crate::expr::{
    rewrite_not, visit, BoundPredicate, BoundReference, Predicate, PredicateVisitor,
};
use crate::spec::manifest::partition_field_types;
use crate::spec::{PartitionSpec, PrimitiveType, Schema, Transform};

/// One partition field with its types resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundPartitionField {
    /// Position in the partition tuple.
    pub position: usize,
    /// The source column's field id.
    pub source_id: i32,
    /// The transform.
    pub transform: Transform,
    /// The partition field as a reference: its field id, name and result type.
    pub partition: BoundReference,
}

/// A partition spec with each field's result type resolved against the table's schemas.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundPartitionSpec {
    /// The spec id.
    pub spec_id: i32,
    /// The fields, in tuple order.
    pub fields: Vec<BoundPartitionField>,
}

impl BoundPartitionSpec {
    /// Resolve `spec` against `schemas` (current schema first; older schemas type fields
    /// whose source column was dropped since).
    pub fn new(spec: &PartitionSpec, schemas: &[&Schema]) -> Result<Self> {
        let types = partition_field_types(spec, schemas)?;
        let fields = spec
            .fields
            .iter()
            .zip(types)
            .enumerate()
            .map(|(position, (f, ty))| BoundPartitionField {
                position,
                source_id: f.source_id,
                transform: f.transform.clone(),
                partition: BoundReference {
                    field_id: spec.field_id(position),
                    name: f.name.clone(),
                    field_type: ty,
                    required: false,
                },
            })
            .collect();
        Ok(Self {
            spec_id: spec.spec_id,
            fields,
        })
    }

    /// The tuple position of the partition field with id `field_id`.
    pub fn position(&self, field_id: i32) -> Option<usize> {
        self.fields
            .iter()
            .find(|f| f.partition.field_id == field_id)
            .map(|f| f.position)
    }

    /// The result type of the partition field at `position`.
    pub fn field_type(&self, position: usize) -> Option<PrimitiveType> {
        self.fields.get(position).map(|f| f.partition.field_type)
    }
}

/// Inclusive projection: a predicate on partition values that holds for every partition
/// holding a row that matches the row filter.
#[derive(Debug, Clone, Copy)]
pub struct InclusiveProjection<'a> {
    spec: &'a BoundPartitionSpec,
}

impl<'a> InclusiveProjection<'a> {
    /// An inclusive projection onto `spec`.
    pub fn new(spec: &'a BoundPartitionSpec) -> Self {
        Self { spec }
    }

    /// Project `predicate` (bound to the table schema).
    pub fn project(&self, predicate: &BoundPredicate) -> Result<BoundPredicate> {
        let p = rewrite_not(predicate.clone());
        visit(
            &p,
            &mut ProjectionVisitor {
                spec: self.spec,
                strict: false,
            },
        )
    }
}

/// Strict projection: a predicate on partition values that holds only for partitions
/// whose rows all match the row filter.
#[derive(Debug, Clone, Copy)]
pub struct StrictProjection<'a> {
    spec: &'a BoundPartitionSpec,
}

impl<'a> StrictProjection<'a> {
    /// A strict projection onto `spec`.
    pub fn new(spec: &'a BoundPartitionSpec) -> Self {
        Self { spec }
    }

    /// Project `predicate` (bound to the table schema).
    pub fn project(&self, predicate: &BoundPredicate) -> Result<BoundPredicate> {
        let p = rewrite_not(predicate.clone());
        visit(
            &p,
            &mut ProjectionVisitor {
                spec: self.spec,
                strict: true,
            },
        )
    }
}

struct ProjectionVisitor<'a> {
    spec: &'a BoundPartitionSpec,
    strict: bool,
}

impl PredicateVisitor<BoundReference> for ProjectionVisitor<'_> {
    type Output = BoundPredicate;

    fn not(&mut self, _c: BoundPredicate) -> Result<BoundPredicate> {
        Err(Error::invalid_argument(
            "projection of a predicate with NOT left in it",
        ))
    }
    fn leaf(&mut self, leaf: &BoundPredicate) -> Result<BoundPredicate> {
        let Some(term) = leaf.term() else {
            return Ok(leaf.clone());
        };
        let mut result = if self.strict {
            Predicate::AlwaysFalse
        } else {
            Predicate::AlwaysTrue
        };
        for field in self
            .spec
            .fields
            .iter()
            .filter(|f| f.source_id == term.field_id)
        {
            if self.strict {
                if let Some(p) = project_strict(&field.transform, &field.partition, leaf)? {
                    result = result.or(p);
                }
            } else if let Some(p) = project_inclusive(&field.transform, &field.partition, leaf)? {
                result = result.and(p);
            }
        }
        Ok(result)
    }
}
