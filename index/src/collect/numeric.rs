//! A numeric collection assembled from its members one at a time: regrouping a template
//! folder that spans most of a lake (`logs/{n}/{n}/app-{n}.log`) holds one of these per
//! (template, format, schema) being read, not the folder's files.

use super::{
    collection_id, numeric_key, Collection, Entry, PartRange, MIN_MEMBERS, SAMPLE_MEMBERS,
};
use crate::spool::Sorter;
use std::io;
use std::path::{Path, PathBuf};

/// The values of one placeholder seen so far.
struct Part {
    name: String,
    /// Smallest in numeric order, the first of equals.
    min: String,
    /// Largest in numeric order, the last of equals.
    max: String,
    /// Every value, to count the distinct ones: sorted on disk past a bound, since a
    /// placeholder can take a value per member.
    values: Sorter<String>,
}

/// A numeric collection being built: [`Builder::add`] its members in path order, then
/// [`Builder::finish`].
pub struct Builder {
    template: String,
    format: String,
    schema: String,
    members: u64,
    bytes: u64,
    time_start: Option<String>,
    time_end: Option<String>,
    samples: Vec<String>,
    /// The placeholders' names, read from the template.
    names: Vec<String>,
    /// One per part of the first member's path.
    parts: Vec<Part>,
    spill: Option<PathBuf>,
    run: usize,
}

impl Builder {
    /// The collection of the files of `template` (its text, with at least one
    /// placeholder), `format` and `schema`. Part values beyond `run` of them are sorted
    /// in files in `spill` (the system's temporary directory with `None`).
    pub fn new(
        template: &str,
        format: &str,
        schema: &str,
        spill: Option<&Path>,
        run: usize,
    ) -> Self {
        Builder {
            template: template.to_string(),
            format: format.to_string(),
            schema: schema.to_string(),
            members: 0,
            bytes: 0,
            time_start: None,
            time_end: None,
            samples: Vec::new(),
            names: placeholders(template),
            parts: Vec::new(),
            spill: spill.map(Path::to_path_buf),
            run,
        }
    }

    /// Members added so far.
    pub fn members(&self) -> u64 {
        self.members
    }

    /// Add the member `e`, whose path gives the placeholders the values `values` (its
    /// [`super::template`]'s parts).
    pub fn add(&mut self, e: &Entry, values: &[String]) -> io::Result<()> {
        let first = self.members == 0;
        if first {
            // As many parts as the first member's path has (a path can hold a literal
            // `{…}`, which the template's text cannot tell from a placeholder); one
            // without a name of its own is a `{n}`.
            self.parts = (0..values.len())
                .map(|k| Part {
                    name: self.names.get(k).cloned().unwrap_or_else(|| "{n}".into()),
                    min: String::new(),
                    max: String::new(),
                    values: Sorter::new(self.spill.as_deref(), self.run),
                })
                .collect();
        }
        self.members += 1;
        self.bytes += e.size;
        if let Some((start, end)) = &e.time {
            if self.time_start.as_ref().is_none_or(|s| start < s) {
                self.time_start = Some(start.clone());
            }
            if self.time_end.as_ref().is_none_or(|s| end > s) {
                self.time_end = Some(end.clone());
            }
        }
        if self.samples.len() < SAMPLE_MEMBERS {
            self.samples.push(e.path.clone());
        }
        for (p, v) in self.parts.iter_mut().zip(values) {
            if first || numeric_key(v) < numeric_key(&p.min) {
                p.min.clone_from(v);
            }
            if first || numeric_key(v) >= numeric_key(&p.max) {
                p.max.clone_from(v);
            }
            p.values.push(v.clone())?;
        }
        Ok(())
    }

    /// The collection, or `None` with fewer than [`MIN_MEMBERS`] members.
    pub fn finish(self) -> io::Result<Option<Collection>> {
        if self.members < MIN_MEMBERS as u64 {
            return Ok(None);
        }
        let mut parts = Vec::with_capacity(self.parts.len());
        for p in self.parts {
            let mut distinct = 0;
            let mut last: Option<String> = None;
            for v in p.values.finish() {
                let v = v?;
                if last.as_ref() != Some(&v) {
                    distinct += 1;
                    last = Some(v);
                }
            }
            parts.push(PartRange {
                name: p.name,
                min: p.min,
                max: p.max,
                distinct,
            });
        }
        Ok(Some(Collection {
            id: collection_id(&self.template, &self.format, &self.schema),
            representative: self.samples[0].clone(),
            template: self.template,
            format: self.format,
            members: self.members,
            bytes: self.bytes,
            time_start: self.time_start,
            time_end: self.time_end,
            parts,
            sample_members: self.samples,
            names: Vec::new(),
        }))
    }
}

/// The placeholders of a template's text, in order (`{n}`, `{date}`…).
fn placeholders(template: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        let j = rest[i..].find('}').map_or(rest.len(), |j| i + j + 1);
        v.push(rest[i..j].to_string());
        rest = &rest[j..];
    }
    v
}

#[cfg(test)]
mod tests {
    use super::super::tests::entry;
    use super::super::{at_once, template};
    use super::*;

    #[test]
    fn a_builder_gives_what_grouping_every_member_at_once_gives() {
        // Equal numbers written differently (the first of the least, the last of the
        // greatest), more values than a run, dates, a member out of the others' range.
        let paths = [
            "z/2019/f001-20190101.csv",
            "z/2019/f01-20190102.csv",
            "z/2019/f010-20190103.csv",
            "z/2019/f1-20190104.csv",
            "z/2019/f10-20190105.csv",
            "z/2019/f9-20190106.csv",
            "z/2021/f10-20210107.csv",
        ];
        let es: Vec<Entry> = paths.iter().map(|p| entry(p, "s1")).collect();
        let want = at_once::group(&es);
        assert_eq!(want.len(), 1);
        let dir = tempfile::tempdir().unwrap();
        for run in [1, 2, 3, 100] {
            let t = template(paths[0]);
            let mut b = Builder::new(&t.text, "csv", "s1", Some(dir.path()), run);
            for e in &es {
                b.add(e, &template(&e.path).parts).unwrap();
            }
            assert_eq!(b.members(), 7);
            assert_eq!(b.finish().unwrap().as_ref(), Some(&want[0].0), "run {run}");
        }
        let c = &want[0].0;
        assert_eq!(
            (c.parts[1].min.as_str(), c.parts[1].max.as_str()),
            ("001", "10")
        );
        assert_eq!(c.parts[1].distinct, 6);
        let mut two = Builder::new(&template(paths[0]).text, "csv", "s1", None, 1);
        for e in &es[..2] {
            two.add(e, &template(&e.path).parts).unwrap();
        }
        assert_eq!(two.finish().unwrap(), None, "fewer than three members");
    }
}
