//! Round trips of PartitionedDataFileWriter: batches in, Parquet files and DataFiles out.
