// Package duckdb holds the tests that read kdissect's Parquet files back with DuckDB, an
// independent reader: every capture's rows against its JSON lines and statistics, a directory
// of files read as one table, and the example queries of docs/parquet.md. It is a module of its own
// because DuckDB's Go driver needs cgo, and kdissect and its tests stay pure Go; .ci/run runs
// it (cd test/duckdb && go test ./...).
package duckdb
