//! The checked-in header is what cbindgen makes of the source now.

use std::path::Path;

#[test]
fn the_checked_in_header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_crate(dir)
        .generate()
        .expect("cbindgen reads the crate");
    let mut made = Vec::new();
    bindings.write(&mut made);
    let made = String::from_utf8(made).expect("the header is UTF-8");
    let path = dir.join("include/tessera.h");
    if std::env::var_os("TESSERA_BLESS").is_some() {
        std::fs::write(&path, &made).expect("write the header");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        made == checked_in,
        "{} is not what the source makes: rerun with TESSERA_BLESS=1 \
         (`TESSERA_BLESS=1 cargo test -p tessera-capi --test header`) and commit it",
        path.display()
    );
}
