//! Trajectories drawn over their courses: one cell per [`CoursePanel`], the course (a road band
//! around the path, or the racing line and gate bars) with the agent's trajectory on top in red,
//! its start marked by a dot.

use image::RgbImage;

use super::raster::{Canvas, Colour, Px};
use super::{sheet, Fit, BORDER, ROAD};
use crate::geom;
use crate::geom::{Quat, Vec2, Vec3};

const TRAJECTORY: Colour = [220, 30, 60];
const LINE: Colour = [40, 110, 200];
const GATE: Colour = [235, 120, 20];

/// One course and one trajectory to draw (plain owned data, so a caller can snapshot a course
/// before regenerating it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CoursePanel {
    /// The closed path (track centerline or racing line), metres.
    pub path: Vec<Vec3>,
    /// Half width of the band drawn around the path (track mode), metres; 0 draws no band.
    pub half_width_m: f32,
    /// Gates `(centre, orientation [x, y, z, w], inner [width, height])`; empty in track mode.
    pub gates: Vec<(Vec3, Quat, Vec2)>,
    /// Frame thickness of the gates, metres.
    pub thickness_m: f32,
    /// The agent's positions, in order.
    pub trajectory: Vec<Vec3>,
}

/// A sheet with one cell of `cell_px` pixels per panel, in a near-square grid.
pub fn trajectory_sheet(panels: &[CoursePanel], cell_px: u32) -> RgbImage {
    sheet(panels.len(), cell_px, |i, canvas| {
        draw_panel(canvas, &panels[i])
    })
}

fn draw_panel(canvas: &mut Canvas, panel: &CoursePanel) {
    let cell = canvas.size() as f32;
    let n = panel.path.len();
    let hw = panel.half_width_m.max(0.0);
    // Band edges from the segment normals.
    let edges: Vec<(Vec3, Vec3)> = (0..n)
        .map(|k| {
            let (a, b) = (panel.path[(k + n - 1) % n], panel.path[(k + 1) % n]);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let l = (dx * dx + dy * dy).sqrt().max(1e-9);
            let (nx, ny) = (-dy / l * hw, dx / l * hw);
            let p = panel.path[k];
            (
                Vec3::new(p[0] + nx, p[1] + ny, p[2]),
                Vec3::new(p[0] - nx, p[1] - ny, p[2]),
            )
        })
        .collect();
    let points = edges
        .iter()
        .flat_map(|(a, b)| [[a[0], a[1]], [b[0], b[1]]])
        .chain(panel.trajectory.iter().map(|p| [p[0], p[1]]))
        .chain(panel.gates.iter().map(|g| [g.0[0], g.0[1]]));
    let Some(fit) = Fit::rect(points, [0.0, 0.0, cell, cell]) else {
        return;
    };
    let width = (cell / 220.0).max(0.6);
    if n >= 3 {
        if hw > 0.0 {
            let l: Vec<Px> = edges.iter().map(|e| fit.px(e.0)).collect();
            let r: Vec<Px> = edges.iter().map(|e| fit.px(e.1)).collect();
            for k in 0..n {
                let j = (k + 1) % n;
                canvas.quad(l[k], l[j], r[j], r[k], ROAD);
            }
            canvas.closed_polyline(&l, width, BORDER);
            canvas.closed_polyline(&r, width, BORDER);
        } else {
            let p: Vec<Px> = panel.path.iter().map(|&p| fit.px(p)).collect();
            canvas.closed_polyline(&p, width, LINE);
        }
    }
    let t = panel.thickness_m.max(0.0);
    for (c, q, s) in &panel.gates {
        let left = geom::axes(*q)[1];
        let h = 0.5 * s.x + t;
        let a = Vec3::new(c.x + h * left.x, c.y + h * left.y, 0.0);
        let b = Vec3::new(c.x - h * left.x, c.y - h * left.y, 0.0);
        canvas.line(
            fit.px(a),
            fit.px(b),
            (t * fit.scale).max(cell / 110.0).max(1.0),
            GATE,
        );
    }
    let traj: Vec<Px> = panel.trajectory.iter().map(|&p| fit.px(p)).collect();
    for w in traj.windows(2) {
        canvas.line(w[0], w[1], (cell / 110.0).max(1.5), TRAJECTORY);
    }
    if let Some(&start) = traj.first() {
        canvas.disc(start, 3.0 * width, TRAJECTORY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panel_shows_road_and_trajectory() {
        let path: Vec<Vec3> = (0..64)
            .map(|i| {
                let a = i as f32 / 64.0 * std::f32::consts::TAU;
                Vec3::new(30.0 * crate::math::cos(a), 30.0 * crate::math::sin(a), 0.0)
            })
            .collect();
        let trajectory = path[..20].to_vec();
        let panel = CoursePanel {
            path,
            half_width_m: 4.0,
            trajectory,
            ..CoursePanel::default()
        };
        let img = trajectory_sheet(&[panel.clone(), CoursePanel::default()], 96);
        assert_eq!(img.dimensions(), (192, 96));
        let count = |x0: u32, c: Colour| {
            (0..96)
                .flat_map(|y| (x0..x0 + 96).map(move |x| (x, y)))
                .filter(|&(x, y)| (0..3).all(|k| img.get_pixel(x, y).0[k].abs_diff(c[k]) <= 30))
                .count()
        };
        assert!(count(0, ROAD) > 100);
        assert!(count(0, TRAJECTORY) > 20);
        assert_eq!(count(96, TRAJECTORY), 0);
    }
}
