use super::*;

#[test]
fn percent_decoding() {
    assert_eq!(percent_decode("1%2C2%2c3"), "1,2,3");
    assert_eq!(percent_decode("a+b"), "a b");
    assert_eq!(percent_decode("100%"), "100%");
    assert_eq!(percent_decode("%zz%4"), "%zz%4");
}

#[test]
fn parameters_are_points_and_numbers() {
    let p = Params::parse("from=1,-2.5,3e2&to=&cx=-4&bad=1,2");
    assert_eq!(p.point("from").ok(), Some([1.0, -2.5, 300.0]));
    assert!(p.point("to").is_err());
    assert!(p.point("bad").is_err());
    assert!(p.point("missing").is_err());
    assert_eq!(p.number::<i32>("cx").ok(), Some(-4));
    let e = p.number::<u8>("cx").err().unwrap();
    assert_eq!(e.status, 400);
}

#[test]
fn every_asset_is_served_once_with_a_type() {
    for (i, (path, content_type, bytes)) in ASSETS.iter().enumerate() {
        assert!(path.starts_with('/'));
        assert!(!content_type.is_empty() && !bytes.is_empty(), "{path}");
        assert!(ASSETS[..i].iter().all(|a| a.0 != *path), "{path} twice");
    }
}
