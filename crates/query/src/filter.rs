//! Query filters: what a search may take and at what cost, by name.
//!
//! A [`Filter`] names the navmesh's areas and off-mesh links (by the names the bake gave
//! them): a cost that replaces the baked one (for an area, a factor on the length walked
//! through it; for a link, world units added to its length), or a name to avoid altogether.
//! [`Query::costs`] resolves it against one navmesh into [`Costs`] (a cost per area and per
//! off-mesh link; unknown names are refused, listing the names there are), which the searches
//! take ([`Query::find_path_costed`], [`Query::path_costed`]). The default, baked costs, is
//! [`Costs::default`].
//!
//! Areas whose cost is not 1 (baked or filtered), or an avoided area, make the search the
//! polygon A* of the `weighted` module; a search with off-mesh link costs other than the
//! baked ones is flat: the hierarchy's tables of lengths hold the baked costs, so a plan over
//! them could miss the cheaper way.

use std::sync::Arc;

use crate::Query;

/// Costs and avoided areas and links by name (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// `(name, cost)`: every area of that name costs this (a factor on the length walked
    /// through it, > 0), and every off-mesh link of that name this (world units added to its
    /// length, >= 0), instead of the baked cost. The last given for a name wins.
    pub costs: Vec<(String, f32)>,
    /// Areas and off-mesh links of these names are never entered.
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
/// table) and per area, its cost, NaN when it is avoided. Cheap to clone and share between
/// threads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Costs {
    /// Empty: the baked costs.
    links: Option<Arc<[f32]>>,
    /// Empty: the baked costs.
    areas: Option<Arc<[f32]>>,
}

impl Costs {
    /// Whether these are the baked costs (a search may then plan over the hierarchy).
    pub fn baked(&self) -> bool {
        self.links.is_none() && self.areas.is_none()
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

    /// The factor of every area on lengths walked through it, by area id (NaN: avoided):
    /// the filter's, else the baked ones of `query`'s mesh.
    pub(crate) fn areas<'c>(&'c self, query: &'c Query) -> &'c [f32] {
        self.areas.as_deref().unwrap_or(&query.area_costs)
    }
}

/// Why a [`Filter`] does not apply to a navmesh.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum FilterError {
    #[error("the navmesh has no area or off-mesh link named `{name}` (it has: {known})")]
    Unknown { name: String, known: String },
    #[error("the cost of `{name}`, {cost}, is not a finite number >= 0 (> 0 for an area)")]
    Cost { name: String, cost: f32 },
}

impl Query<'_> {
    /// `filter` resolved against this navmesh (see [`Filter`]).
    pub fn costs(&self, filter: &Filter) -> Result<Costs, FilterError> {
        if filter.costs.is_empty() && filter.avoid.is_empty() {
            return Ok(Costs::default());
        }
        let (table, areas) = (&self.mesh.off_mesh, &self.mesh.areas);
        let mut links: Vec<f32> = table.iter().map(|l| l.cost.to_native()).collect();
        let mut area_costs = self.area_costs.clone();
        let known = || {
            let mut names: Vec<&str> = areas
                .iter()
                .map(|a| a.name.as_str())
                .chain(table.iter().map(|l| l.name.as_str()))
                .collect();
            names.sort_unstable();
            names.dedup();
            names.join(", ")
        };
        // A name may be an area's and links' at once: it sets both. Each table takes the
        // cost where `ok` says it may; a cost out of its range is refused.
        let mut set = |name: &str, cost: f32, area_ok: bool, link_ok: bool| {
            let area_names = areas.iter().map(|a| a.name.as_str());
            let link_names = table.iter().map(|l| l.name.as_str());
            let a = set_named(&mut area_costs, area_names, name, cost, area_ok)?;
            let l = set_named(&mut links, link_names, name, cost, link_ok)?;
            if a || l {
                Ok(())
            } else {
                Err(FilterError::Unknown {
                    name: name.to_string(),
                    known: known(),
                })
            }
        };
        for (name, cost) in &filter.costs {
            let link_ok = cost.is_finite() && *cost >= 0.0;
            set(name, *cost, link_ok && *cost > 0.0, link_ok)?;
        }
        for name in &filter.avoid {
            set(name, f32::NAN, true, true)?;
        }
        // Costs equal to the baked ones stay baked (an avoided one, NaN, never equals).
        let baked_links: Vec<f32> = table.iter().map(|l| l.cost.to_native()).collect();
        Ok(Costs {
            links: (links != baked_links).then(|| links.into()),
            areas: (area_costs != self.area_costs).then(|| area_costs.into()),
        })
    }
}

/// Sets `cost` in `costs` wherever `names` (in step) is `name`; whether any was, or an error
/// when one is and the cost is not `ok` for this table.
fn set_named<'n>(
    costs: &mut [f32],
    names: impl Iterator<Item = &'n str>,
    name: &str,
    cost: f32,
    ok: bool,
) -> Result<bool, FilterError> {
    let mut any = false;
    for (c, n) in costs.iter_mut().zip(names) {
        if n == name {
            if !ok {
                return Err(FilterError::Cost {
                    name: name.to_string(),
                    cost,
                });
            }
            *c = cost;
            any = true;
        }
    }
    Ok(any)
}
