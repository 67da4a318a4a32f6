//! Query filters: what a search may take and at what cost, by name.
//!
//! A [`Filter`] names the navmesh's off-mesh links (by the name the bake gave them): a cost
//! that replaces the baked one, or a name to avoid altogether. [`Query::costs`] resolves it
//! against one navmesh into [`Costs`] (a cost per off-mesh link; unknown names are refused,
//! listing the names there are), which the searches take ([`Query::find_path_costed`],
//! [`Query::path_costed`]). The default, baked costs, is [`Costs::default`].
//!
//! A search with costs other than the baked ones is flat: the hierarchy's tables of lengths
//! hold the baked costs, so a plan over them could miss the cheaper way.

use std::sync::Arc;

use crate::Query;

/// Costs and avoided links by name (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// `(name, cost)`: every off-mesh link of that name costs this (world units added to its
    /// length) instead of its baked cost. The last given for a name wins.
    pub costs: Vec<(String, f32)>,
    /// Off-mesh links of these names are never taken.
    pub avoid: Vec<String>,
}

impl Filter {
    /// The filter with `name` costing `cost`.
    pub fn cost(mut self, name: &str, cost: f32) -> Filter {
        self.costs.push((name.to_string(), cost));
        self
    }

    /// The filter with `name` avoided.
    pub fn avoid(mut self, name: &str) -> Filter {
        self.avoid.push(name.to_string());
        self
    }
}

/// A [`Filter`] resolved against one navmesh: per off-mesh link (its entry in the navmesh's
/// table), its cost, NaN when it is avoided. Cheap to clone and share between threads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Costs {
    /// Empty: the baked costs.
    links: Option<Arc<[f32]>>,
}

impl Costs {
    /// Whether these are the baked costs (a search may then plan over the hierarchy).
    pub fn baked(&self) -> bool {
        self.links.is_none()
    }

    /// The cost of taking off-mesh link `k` besides its length, `baked` unless the filter
    /// set it; `None` when it is avoided.
    #[inline]
    pub(crate) fn link(&self, k: u32, baked: f32) -> Option<f32> {
        match &self.links {
            None => Some(baked),
            Some(costs) => {
                let c = costs.get(k as usize).copied().unwrap_or(baked);
                (!c.is_nan()).then_some(c)
            }
        }
    }
}

/// Why a [`Filter`] does not apply to a navmesh.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    #[error("the navmesh has no off-mesh link named `{name}` (it has: {known})")]
    Unknown { name: String, known: String },
    #[error("the cost of `{name}`, {cost}, is not a finite number >= 0")]
    Cost { name: String, cost: f32 },
}

impl Query<'_> {
    /// `filter` resolved against this navmesh (see [`Filter`]).
    pub fn costs(&self, filter: &Filter) -> Result<Costs, FilterError> {
        if filter.costs.is_empty() && filter.avoid.is_empty() {
            return Ok(Costs::default());
        }
        let table = &self.mesh.off_mesh;
        let mut costs: Vec<f32> = table.iter().map(|l| l.cost.to_native()).collect();
        let known = || {
            let mut names: Vec<&str> = table.iter().map(|l| l.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            if names.is_empty() {
                "no off-mesh links".to_string()
            } else {
                names.join(", ")
            }
        };
        let mut set = |name: &str, cost: f32| {
            let mut any = false;
            for (c, l) in costs.iter_mut().zip(table.iter()) {
                if l.name.as_str() == name {
                    *c = cost;
                    any = true;
                }
            }
            if any {
                Ok(())
            } else {
                Err(FilterError::Unknown {
                    name: name.to_string(),
                    known: known(),
                })
            }
        };
        for (name, cost) in &filter.costs {
            if !(cost.is_finite() && *cost >= 0.0) {
                return Err(FilterError::Cost {
                    name: name.clone(),
                    cost: *cost,
                });
            }
            set(name, *cost)?;
        }
        for name in &filter.avoid {
            set(name, f32::NAN)?;
        }
        Ok(Costs {
            links: Some(costs.into()),
        })
    }
}
