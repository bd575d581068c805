//! The keys of the catalog's `meta` table, defined once: a reader or writer names a
//! [`Key`], so a misspelt key does not compile. The stored strings ([`Key::as_str`]) are
//! part of the on-disk format: never change one.

/// A key of the `meta` table (key/value strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// The index format version ([`super::FORMAT_VERSION`]); written when the catalog is
    /// created, checked by every open.
    FormatVersion,
    /// The lake root, absolute; written when the catalog is created, checked by every
    /// writer open ([`super::CatalogReader::lake_root`]).
    LakeRoot,
    /// When the catalog was created, Unix milliseconds; written with it, read by no one.
    CreatedAt,
    /// The rule collections were grouped by; written by the catalog when it opens a
    /// catalog of an older rule (and marks every template for regrouping).
    CollectionsVersion,
    /// How `embeddings.vector` is encoded; written by the catalog when it rewrites an
    /// older catalog's vectors.
    VectorEncoding,
    /// The LLM analyzer's model and prompt (JSON [`super::LlmAnalyzerKey`]); written by
    /// `index --llm-analyzer`, read by `describe` and the agent.
    LlmAnalyzer,
    /// The crawl's options (JSON [`crate::indexer::WalkOptions`]); written at the end of
    /// every index run, read by the CLI's and MCP's next runs to walk the lake alike.
    WalkOptions,
    /// When the last index run or watch batch finished, Unix milliseconds; written at the
    /// end of each, so a reader that sees it change knows the index changed (the service
    /// then opens a fresh searcher).
    LastIndexFinishedAt,
    /// The last run's report (JSON [`crate::indexer::IndexReport`]); written by every
    /// index run, read by `status`.
    LastIndexReport,
    /// The id of the embedder of the stored vectors; written by the search sync, read by
    /// search and `status`.
    Embedder,
    /// How to build that embedder again (its spec); written by the search sync, read
    /// by search and `doctor`.
    EmbedderSpec,
    /// The version of the search documents ([`crate::search::sync::SEARCH_DOCS`]);
    /// written by the search sync.
    SearchDocsVersion,
    /// The vector index's state (JSON [`crate::search::ann::VectorMeta`]); written by
    /// `search::ann` with the graph's members.
    VectorIndex,
    /// The rule lookup links were made by ([`crate::companion::lookup::LOOKUP_RULE`]);
    /// written by the indexer's relink step (`indexer::relink`).
    LookupsVersion,
    /// The version of the ranking records ([`crate::analyze::record::RECORD_VERSION`])
    /// every description has; written by the catalog when a writer opens a catalog of
    /// none or another version (and derives every record again).
    RankRecordsVersion,
    /// Present when vectors were given up with a lost or damaged generation of the vector
    /// graph (`catalog::held`): the next search sync looks for every file's missing
    /// vector, embeds them, and removes it.
    VectorsMissing,
    /// Present while a generation of the vector graph is swapped in (its number): every
    /// change of a file then marks its path in `vector_stale`. Written with the graph's
    /// members by the swap (`CatalogWriter::replace_graph_members`).
    VectorGraph,
    /// The rule tables that span many files were found and described by
    /// (`dataset::TABLES_RULE`), written by the run that derived them; another (or none,
    /// a catalog from before tables) has every table derived again by the next run.
    TablesVersion,
    /// The S3 endpoint an object-store lake was indexed through (`--endpoint`,
    /// `AWS_ENDPOINT_URL`); written by its index runs, read by what reads its objects
    /// later (`ask` staging them), so they reach the same store.
    Endpoint,
}

impl Key {
    /// Every key.
    pub const ALL: [Key; 19] = [
        Key::FormatVersion,
        Key::LakeRoot,
        Key::CreatedAt,
        Key::CollectionsVersion,
        Key::VectorEncoding,
        Key::LlmAnalyzer,
        Key::WalkOptions,
        Key::LastIndexFinishedAt,
        Key::LastIndexReport,
        Key::Embedder,
        Key::EmbedderSpec,
        Key::SearchDocsVersion,
        Key::VectorIndex,
        Key::LookupsVersion,
        Key::RankRecordsVersion,
        Key::VectorsMissing,
        Key::VectorGraph,
        Key::TablesVersion,
        Key::Endpoint,
    ];

    /// The key as stored.
    pub const fn as_str(self) -> &'static str {
        match self {
            Key::FormatVersion => "format_version",
            Key::LakeRoot => "lake_root",
            Key::CreatedAt => "created_at",
            Key::CollectionsVersion => "collections_version",
            Key::VectorEncoding => "vector_encoding",
            Key::LlmAnalyzer => "llm_analyzer",
            Key::WalkOptions => "walk_options",
            Key::LastIndexFinishedAt => "last_index_finished_at",
            Key::LastIndexReport => "last_index_report",
            Key::Embedder => "embedder",
            Key::EmbedderSpec => "embedder_spec",
            Key::SearchDocsVersion => "search_docs_version",
            Key::VectorIndex => "vector_index",
            Key::LookupsVersion => "lookups_version",
            Key::RankRecordsVersion => "rank_records_version",
            Key::VectorsMissing => "vectors_missing",
            Key::VectorGraph => "vector_graph",
            Key::TablesVersion => "tables_version",
            Key::Endpoint => "endpoint",
        }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl rusqlite::ToSql for Key {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

/// The value of `key` on `conn`: what [`super::CatalogReader::meta`] reads, for the schema
/// steps that run on the bare connection while a catalog is being opened.
pub(super) fn read(conn: &rusqlite::Connection, key: Key) -> crate::error::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([key], |r| r.get(0))
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::Key;

    /// The stored strings are the on-disk format: existing indexes hold these.
    #[test]
    fn stored_strings_are_fixed() {
        let got: Vec<&str> = Key::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            got,
            [
                "format_version",
                "lake_root",
                "created_at",
                "collections_version",
                "vector_encoding",
                "llm_analyzer",
                "walk_options",
                "last_index_finished_at",
                "last_index_report",
                "embedder",
                "embedder_spec",
                "search_docs_version",
                "vector_index",
                "lookups_version",
                "rank_records_version",
                "vectors_missing",
                "vector_graph",
                "tables_version",
                "endpoint",
            ]
        );
    }
}
