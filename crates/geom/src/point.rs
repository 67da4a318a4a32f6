//! Points written as text: `X,Y,Z`, as the command line (`--from`, `--to`) and the viewer's
//! API (`from=`, `to=`) take them.

/// Why a text is not an `X,Y,Z` point.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PointError {
    /// Not three comma-separated parts.
    #[error("expected X,Y,Z (three numbers), got {text:?}")]
    Count { text: String },
    /// A part that is not a number, or not a finite one.
    #[error("{part:?} is not a finite number")]
    Number { part: String },
}

/// Parses `X,Y,Z`: three finite numbers separated by commas, each with optional spaces around
/// it (`1,-2.5,3e2`, `1, 2, 3`). The axes are whatever the caller's convention is: this reads
/// numbers, it converts nothing.
pub fn parse_point(text: &str) -> Result<[f64; 3], PointError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(PointError::Count {
            text: text.to_string(),
        });
    }
    let mut point = [0.0; 3];
    for (v, part) in point.iter_mut().zip(&parts) {
        *v = part
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| PointError::Number {
                part: part.to_string(),
            })?;
    }
    Ok(point)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_finite_numbers_make_a_point() {
        assert_eq!(parse_point("1,-2.5,3e2"), Ok([1.0, -2.5, 300.0]));
        assert_eq!(parse_point(" 1 , 2,3 "), Ok([1.0, 2.0, 3.0]));
        assert_eq!(
            parse_point("1,2").unwrap_err().to_string(),
            "expected X,Y,Z (three numbers), got \"1,2\""
        );
        assert!(matches!(
            parse_point("1,2,3,4"),
            Err(PointError::Count { .. })
        ));
        assert!(matches!(parse_point(""), Err(PointError::Count { .. })));
        assert_eq!(
            parse_point("1,x,3").unwrap_err().to_string(),
            "\"x\" is not a finite number"
        );
        for bad in ["1,inf,3", "NaN,2,3", "1,,3", "1,2,1e999"] {
            assert!(
                matches!(parse_point(bad), Err(PointError::Number { .. })),
                "{bad}"
            );
        }
    }
}
