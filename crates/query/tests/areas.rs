//! Paths over areas of different costs: a road straight between two squares and a longer
//! footpath round it, a road the filter avoids or prices.

mod common;

use common::{frame, Builder, Bytes};
use tessera_navmesh::{Area, NavMesh};
use tessera_query::{Costs, Filter, Planner, Query};

/// Polygons (one region each, ids in this order): 0 the start square A (x 0..4, y 0..4),
/// 1 the road R (x 4..20), 2 the end square B (x 20..24), then the footpath round the
/// road's north side: 3 (x 0..4, y 4..8) above A, 4 (x 4..20, y 4..8) beside the road (a
/// portal between them: a pavement), 5 (x 20..24, y 4..8) above B.
fn town() -> Builder {
    let mut b = Builder::new();
    b.rect(0, 0, 4, 4, 0, 0);
    b.rect(4, 0, 20, 4, 0, 1);
    b.rect(20, 0, 24, 4, 0, 2);
    b.rect(0, 4, 4, 8, 0, 3);
    b.rect(4, 4, 20, 8, 0, 4);
    b.rect(20, 4, 24, 8, 0, 5);
    b
}

const ROAD: u32 = 1;
const PAVEMENT: u32 = 4;

/// The town, its road of cost `road_cost` (areas: default, road, footpath, water).
fn bytes(road_cost: f32) -> Bytes {
    let mut mesh: NavMesh = tessera_navgraph::build(frame(), &town().input).expect("valid");
    mesh.areas = vec![
        Area::default_area(),
        Area {
            name: "road".into(),
            cost: road_cost,
            walkable: true,
        },
        Area {
            name: "footpath".into(),
            cost: 1.0,
            walkable: true,
        },
        Area {
            name: "water".into(),
            cost: 1.0,
            walkable: false,
        },
    ];
    for p in &mut mesh.polys {
        p.area_id = match p.region {
            1 => 1,
            3..=5 => 2,
            _ => 0,
        };
    }
    Bytes::of(&mesh)
}

const A: [f32; 3] = [2.0, 2.0, 0.0];
const B: [f32; 3] = [22.0, 2.0, 0.0];

fn corridor(q: &Query, costs: &Costs) -> Vec<u32> {
    let c = q.find_path_costed(0, A, 2, B, Planner::Hierarchical, costs);
    assert!(c.found);
    c.polys
}

#[test]
fn the_road_is_taken_unless_it_costs_more_than_the_way_round() {
    let bytes = bytes(1.0);
    let q = Query::new(bytes.mesh());
    // Straight along the road: 20 m. Round by the footpath: 2.8 + 16 + 2.8 = 21.7 m.
    assert_eq!(corridor(&q, &Costs::default()), [0, ROAD, 2]);
    // A road costing 1.05 (20.8) is still cheaper than the way round; at 1.2 (23.2) not.
    let priced = |c: f32| q.costs(&Filter::default().cost("road", c)).unwrap();
    assert_eq!(corridor(&q, &priced(1.05)), [0, ROAD, 2]);
    let round = corridor(&q, &priced(1.2));
    assert!(
        !round.contains(&ROAD) && round.contains(&PAVEMENT),
        "{round:?}"
    );
    // Avoided, the road is never entered, whatever it costs.
    let avoid = q.costs(&Filter::default().avoid("road")).unwrap();
    assert_eq!(corridor(&q, &avoid), [0, 3, PAVEMENT, 5, 2]);
    // The path's length is the pulled string's: round the road's corners.
    let a = q.path_costed(scene(A), scene(B), Planner::Hierarchical, &avoid);
    assert!(a.found);
    let round = 2.0 * 8f64.sqrt() + 16.0;
    assert!((a.length - round).abs() < 1e-3, "{} vs {round}", a.length);
    // Cheaper footpaths change nothing here: the road is shorter and as cheap.
    let cheap = q.costs(&Filter::default().cost("footpath", 0.99)).unwrap();
    assert_eq!(corridor(&q, &cheap), [0, ROAD, 2]);
}

#[test]
fn a_baked_cost_weighs_without_a_filter() {
    let bytes = bytes(3.0);
    let q = Query::new(bytes.mesh());
    let baked = corridor(&q, &Costs::default());
    assert!(!baked.contains(&ROAD), "{baked:?}");
    // A filter setting it back to 1 takes the road again.
    let one = q.costs(&Filter::default().cost("road", 1.0)).unwrap();
    assert_eq!(corridor(&q, &one), [0, ROAD, 2]);
    // Avoiding the footpath too leaves no way: not found.
    let none = q
        .costs(&Filter::default().avoid("footpath").avoid("road"))
        .unwrap();
    let c = q.find_path_costed(0, A, 2, B, Planner::Flat, &none);
    assert!(!c.found);
    // As any search that does not reach the end: the corridor stops where it came nearest.
    assert_eq!(c.polys, [0]);
    let road_only = q.costs(&Filter::default().avoid("footpath")).unwrap();
    let c = q.find_path_costed(
        3,
        [2.0, 6.0, 0.0],
        5,
        [22.0, 6.0, 0.0],
        Planner::Flat,
        &road_only,
    );
    assert!(!c.found);
    assert_eq!(
        c.polys,
        [3, 0, ROAD, 2],
        "to B, the polygon nearest the end"
    );
}

#[test]
fn unknown_names_and_bad_costs_are_refused() {
    let bytes = bytes(1.0);
    let q = Query::new(bytes.mesh());
    let e = q.costs(&Filter::default().avoid("lava")).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("lava") && text.contains("road") && text.contains("footpath"),
        "{text}"
    );
    // An area's cost is a factor: 0 is refused (a link may cost 0).
    assert!(q.costs(&Filter::default().cost("road", 0.0)).is_err());
    assert!(q.costs(&Filter::default().cost("water", 2.0)).is_ok());
}

fn scene(p: [f32; 3]) -> [f64; 3] {
    let o = frame().origin;
    [0, 1, 2].map(|k| f64::from(p[k]) + o[k])
}
