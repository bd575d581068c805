//! Files that several modules' unit tests describe, written once.

/// A tar archive of `files` (name, bytes).
pub(crate) fn tar_of<D: AsRef<[u8]>>(files: &[(&str, D)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in files {
        let data = data.as_ref();
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, data).unwrap();
    }
    b.into_inner().unwrap()
}

/// Two tables in one CSV, each with its title, the second with a trailing empty header
/// cell (`Content::Tables`).
pub(crate) fn two_tables_csv() -> String {
    let mut t = String::from("Table 1: Complaints by Category,,,\nCategory,2019,2020,2021\n");
    for (i, c) in ["Noise", "Heat", "Water", "Parking", "Trees"]
        .iter()
        .enumerate()
    {
        t.push_str(&format!("{c},{},{},{}\n", 10 + i, 20 + i, 30 + i));
    }
    t.push_str(",,,\nTable 2: Response times,,,\n,,,\nDistrict,Median days,Mean days,\n");
    for (i, d) in ["North", "South", "East", "West"].iter().enumerate() {
        t.push_str(&format!("{d},{}.5,{}.25,\n", i + 1, i + 2));
    }
    t.push_str("Source: City 311 data,,,\n");
    t
}
