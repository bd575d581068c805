//! Descriptions written by the LLM analyzer (`lakestar index --llm-analyzer`): the
//! output of an LLM-written describer script, cached by (content hash, model, prompt
//! hash), beside the native descriptions.
//!
//! The table is additive: catalogs made before it gain it when a writer opens them (no
//! format-version bump), and a reader of a catalog without it sees no LLM description.

use super::{CatalogReader, CatalogWriter, Hash, MetaKey};
use crate::error::{Error, Result};
use rusqlite::{params, OptionalExtension};

/// Created when a writer opens the catalog.
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS llm_descriptions (
    hash       BLOB NOT NULL,
    model      TEXT NOT NULL,
    prompt     TEXT NOT NULL,
    text       BLOB,
    script     TEXT NOT NULL,
    error      TEXT,
    attempts   INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (hash, model, prompt)
) WITHOUT ROWID;
";

/// One LLM analyzer result for a content hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmDescription {
    /// The description: what the last script printed; `None` when it failed.
    pub text: Option<String>,
    /// The last script that ran.
    pub script: String,
    /// Why the last script failed (its traceback), when it did.
    pub error: Option<String>,
    /// Scripts run: the first plus the debugger's fixes.
    pub attempts: u32,
    /// When it was stored, Unix milliseconds.
    pub created_at: i64,
}

/// What the [`MetaKey::LlmAnalyzer`] meta key records.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LlmAnalyzerKey {
    /// The analyzer role's model.
    pub model: String,
    /// The short hash of the analyzer prompt.
    pub prompt: String,
}

impl CatalogReader {
    /// The LLM analyzer's result for (hash, model, prompt hash), if one is stored.
    pub fn llm_description(
        &self,
        hash: &Hash,
        model: &str,
        prompt: &str,
    ) -> Result<Option<LlmDescription>> {
        let found = self
            .conn
            .prepare_cached(
                "SELECT text, script, error, attempts, created_at FROM llm_descriptions
                 WHERE hash = ?1 AND model = ?2 AND prompt = ?3",
            )
            .and_then(|mut s| {
                s.query_row(params![&hash[..], model, prompt], |r| {
                    Ok((
                        r.get::<_, Option<Vec<u8>>>(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                    ))
                })
                .optional()
            });
        let found = match found {
            Ok(f) => f,
            // A catalog from before the table, opened by a reader: nothing stored.
            Err(rusqlite::Error::SqliteFailure(_, Some(msg)))
                if msg.contains("no such table: llm_descriptions") =>
            {
                return Ok(None)
            }
            Err(e) => return Err(e.into()),
        };
        let Some((blob, script, error, attempts, created_at)) = found else {
            return Ok(None);
        };
        let text = match blob {
            Some(b) => Some(
                String::from_utf8(
                    zstd::decode_all(b.as_slice())
                        .map_err(|e| Error::corrupt("LLM description", e))?,
                )
                .map_err(|e| Error::corrupt("LLM description", e))?,
            ),
            None => None,
        };
        Ok(Some(LlmDescription {
            text,
            script,
            error,
            attempts,
            created_at,
        }))
    }

    /// The (model, prompt hash) recorded by the last `index --llm-analyzer` run.
    pub fn llm_analyzer_key(&self) -> Result<Option<LlmAnalyzerKey>> {
        Ok(self
            .meta(MetaKey::LlmAnalyzer)?
            .and_then(|v| serde_json::from_str(&v).ok()))
    }

    /// The text `ask` shows for a file of content `hash`: the LLM description of the
    /// recorded (model, prompt), when there is a successful one.
    pub fn recorded_llm_text(&self, hash: &Hash) -> Result<Option<String>> {
        let Some(key) = self.llm_analyzer_key()? else {
            return Ok(None);
        };
        Ok(self
            .llm_description(hash, &key.model, &key.prompt)?
            .and_then(|d| d.text))
    }
}

impl CatalogWriter {
    /// Store (or replace) the LLM analyzer's result for (hash, model, prompt hash).
    pub fn put_llm_description(
        &self,
        hash: &Hash,
        model: &str,
        prompt: &str,
        d: &LlmDescription,
    ) -> Result<()> {
        let blob = match &d.text {
            Some(t) => {
                Some(zstd::encode_all(t.as_bytes(), 3).map_err(|e| Error::io(&self.dir, e))?)
            }
            None => None,
        };
        self.conn.execute(
            "INSERT OR REPLACE INTO llm_descriptions
             (hash, model, prompt, text, script, error, attempts, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                &hash[..],
                model,
                prompt,
                blob,
                d.script,
                d.error,
                d.attempts,
                d.created_at
            ],
        )?;
        Ok(())
    }

    /// Record the (model, prompt hash) whose descriptions readers should use.
    pub fn set_llm_analyzer_key(&self, key: &LlmAnalyzerKey) -> Result<()> {
        let v = serde_json::to_string(key).expect("two strings serialize");
        self.set_meta(MetaKey::LlmAnalyzer, &v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::WriterLock;

    fn stored(text: Option<&str>, error: Option<&str>) -> LlmDescription {
        LlmDescription {
            text: text.map(str::to_string),
            script: "print('x')".into(),
            error: error.map(str::to_string),
            attempts: 2,
            created_at: 7,
        }
    }

    #[test]
    fn keyed_by_hash_model_and_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let cat =
            CatalogWriter::open(WriterLock::acquire(dir.path()).unwrap(), dir.path()).unwrap();
        let h = [1u8; 32];
        assert_eq!(cat.llm_description(&h, "m", "p").unwrap(), None);
        cat.put_llm_description(&h, "m", "p", &stored(Some("cols: a, b"), None))
            .unwrap();
        cat.put_llm_description(&h, "m", "q", &stored(None, Some("KeyError")))
            .unwrap();
        assert_eq!(
            cat.llm_description(&h, "m", "p").unwrap(),
            Some(stored(Some("cols: a, b"), None))
        );
        assert_eq!(
            cat.llm_description(&h, "m", "q").unwrap(),
            Some(stored(None, Some("KeyError")))
        );
        assert_eq!(cat.llm_description(&h, "other", "p").unwrap(), None);
        assert_eq!(cat.llm_description(&[2u8; 32], "m", "p").unwrap(), None);

        assert_eq!(cat.recorded_llm_text(&h).unwrap(), None);
        cat.set_llm_analyzer_key(&LlmAnalyzerKey {
            model: "m".into(),
            prompt: "p".into(),
        })
        .unwrap();
        assert_eq!(
            cat.recorded_llm_text(&h).unwrap().as_deref(),
            Some("cols: a, b")
        );
    }

    #[test]
    fn a_reader_of_a_catalog_without_the_table_sees_nothing() {
        let dir = tempfile::tempdir().unwrap();
        {
            let cat =
                CatalogWriter::open(WriterLock::acquire(dir.path()).unwrap(), dir.path()).unwrap();
            cat.conn
                .execute_batch("DROP TABLE llm_descriptions")
                .unwrap();
        }
        let reader = CatalogReader::open(dir.path()).unwrap();
        assert_eq!(reader.llm_description(&[1u8; 32], "m", "p").unwrap(), None);
        // A writer adds it back.
        let cat =
            CatalogWriter::open(WriterLock::acquire(dir.path()).unwrap(), dir.path()).unwrap();
        cat.put_llm_description(&[1u8; 32], "m", "p", &stored(Some("t"), None))
            .unwrap();
    }

    #[test]
    fn a_damaged_text_is_a_corrupt_blob_with_the_decoders_error() {
        let dir = tempfile::tempdir().unwrap();
        let cat =
            CatalogWriter::open(WriterLock::acquire(dir.path()).unwrap(), dir.path()).unwrap();
        let h = [1u8; 32];
        cat.put_llm_description(&h, "m", "p", &stored(Some("t"), None))
            .unwrap();
        cat.conn
            .execute("UPDATE llm_descriptions SET text = x'00010203'", [])
            .unwrap();
        let e = cat.llm_description(&h, "m", "p").unwrap_err();
        assert!(
            matches!(
                &e,
                crate::Error::Internal(crate::InternalError::CorruptBlob {
                    what: "LLM description",
                    source: crate::DecodeError::Zstd(_),
                })
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("lakestar index --rebuild"), "{e}");
        let source = std::error::Error::source(&e).expect("a source");
        assert!(source.source().expect("zstd's").is::<std::io::Error>());
    }
}
