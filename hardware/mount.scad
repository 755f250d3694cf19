// tabletop-referee camera mount: parametric OpenSCAD model.
//
// Overhead mount (flat boards): a weighted base, or a table-edge clamp, holds a vertical pole; a
// sliding tee collar holds a horizontal arm; a fork on the arm's end carries the camera plate on a
// tilt hinge (an M4 wing screw into a nut trapped in the fork). The plate takes a Raspberry Pi
// Camera Module 3, standard or wide, on its four M2 holes (21 x 12.5 mm). The pole and the arm
// are cut from 20 mm tube or dowel; every other part is printed. Front stand (Gobsmacked, an
// upright board): the same base with a short post and the fork on top, the camera at the board's
// mid-height looking square at its face.
//
// The camera height comes from the game's mat (hardware/boards/GAME.json, "mat" "size") with the
// formula of hardware/setup.md, "Camera height": the whole mat in the 4:3 frame with 5 % of its
// size to spare on every side, the camera aimed at the mat's centre from `tilt_deg` off vertical.
//
//   openscad -o assembly.png hardware/mount.scad         # a picture (needs a display or xvfb)
//   openscad -D 'part="camera_plate"' -o camera_plate.stl hardware/mount.scad
//   openscad -D 'game="blokus-duo"' -D 'tilt_deg=20' -D 'part="collar"' -o collar.stl ...
//
// The console (ECHO) prints where the camera goes and the lengths to cut the tubes to.

/* [What to show] */
// "assembly" shows the whole mount on its mat; any other value is one printable part, laid out
// for printing (no supports needed).
part = "assembly"; // [assembly, base, clamp, collar, fork, tripod_fork, camera_plate]

/* [Game and camera] */
game = "gobblet"; // [gobblet, blokus, blokus-duo, spectrangle, gobsmacked, custom]
// Camera Module 3 lens.
lens = "standard"; // [standard, wide]
// Camera tilt from vertical, towards the mat's centre (overhead mount; 0 = straight down).
tilt_deg = 0; // [0:1:35]
// Height of the lens above the table (mm); 0 = from the game preset.
camera_height = 0;
// Horizontal distance from the pole's axis to the tilt hinge (mm); 0 = just clear of the mat.
arm_length = 0;
// What holds the pole up.
base_style = "weighted"; // [weighted, clamp]

/* [Custom game] */
// Mat width (across the image) and depth (towards the camera's set-back), mm.
custom_mat = [372, 372];

/* [Gobsmacked board] */
// Height of the board face's bottom edge above the table (assumption: measure yours).
face_bottom = 30;
// Height of the board face (hardware/boards/gobsmacked.json, "board" "outline").
face_height = 220;

/* [Stock and fit] */
// Outside diameter of the pole and arm (aluminium tube or hardwood dowel).
tube_d = 20;
// Extra diameter of every printed hole, for a sliding fit.
fit = 0.4;
// Largest tabletop the clamp grips (mm).
table_max = 45;

/* [Hidden] */
$fn = 64;
eps = 0.01;

// ------------------------------------------------------------------ the game presets
// name, mat [width, depth] (mm, the "mat" "size" of hardware/boards/GAME.json), orientation.
presets = [
    ["gobblet", [372, 372], "flat"],
    ["blokus", [368, 368], "flat"],
    ["blokus-duo", [408, 408], "flat"],
    ["spectrangle", [372, 366], "flat"],
    ["gobsmacked", [420, 240], "upright"],
];

function preset(name) = [for (p = presets) if (p[0] == name) p][0];

// ------------------------------------------------------------------ where the camera goes
V_FOV = assert(lens == "standard" || lens == "wide", str("unknown lens: ", lens))
    lens == "wide" ? 67 : 41;  // Camera Module 3 datasheet, vertical field of view (degrees)
ASPECT = 4 / 3;                     // the 1280x960 frame: a 4:3 crop of the 16:9 sensor
MARGIN = 0.05;                      // share of the mat's size to spare on every side

tan_v = tan(V_FOV / 2);
tan_h = ASPECT * tan_v;

// Distance from the lens to the mat's centre along the line of sight (see setup.md).
function view_distance(mat, tilt) =
    let (a = (0.5 + MARGIN) * mat[0], b = (0.5 + MARGIN) * mat[1])
    max(a / tan_h, b * cos(tilt) / tan_v) + b * sin(tilt);

mat = assert(game == "custom" || len(preset(game)) == 3, str("unknown game: ", game))
    game == "custom" ? custom_mat : preset(game)[1];
upright = game != "custom" && preset(game)[2] == "upright";
tilt = assert(tilt_deg >= 0 && tilt_deg <= 35, "tilt_deg: 0 to 35 degrees (what is tested)")
    upright ? 0 : tilt_deg;

distance = view_distance(mat, tilt);  // the closest the lens may be to the mat's centre
face_mid = face_bottom + face_height / 2;
lens_z = camera_height > 0 ? camera_height : upright ? face_mid : distance * cos(tilt);
setback = upright ? distance : lens_z * tan(tilt);  // lens to the mat's centre, horizontally
aim = upright ? distance : lens_z / cos(tilt);     // lens to the mat's centre, line of sight

// ------------------------------------------------------------------ part dimensions
bore = tube_d + fit;
wall = 4;
socket_depth = 25;
// camera plate and hinge
knuckle_r = 6;        // hinge knuckle radius
knuckle_len = 10;     // along the hinge axis
lug_t = 5;            // fork lug thickness
lug_r = 9;            // fork lug radius around the axis
fork_len = 16;        // fork socket bottom to the hinge axis
cap_t = 4;            // socket bottom
plate = [32, 30, 4];  // camera plate: across, along, thick
plate_y0 = lug_r + 2; // hinge axis to the plate's near edge
pad_h = 3;            // standoffs: room for the parts on the camera's back
m2_d = 2.2;
m4_d = 4.3;
tap_d = 3.4;  // an M4 screw cuts its own thread in this hole (tube set screws)
m4_nut = 7.0 / cos(30) + fit;  // across corners of an M4 nut
m5_d = 5.3;
m5_nut = 8.0 / cos(30) + fit;
// Camera Module 3: 25 x 24 mm board, holes 2 mm in from the sides and 2 mm and 14.5 mm from the
// top edge (the edge opposite the cable); 11.5 mm deep (wide: 12.4 mm).
cm3 = [25, 24, lens == "wide" ? 12.4 : 11.5];
cm3_holes = [[-10.5, 10], [10.5, 10], [-10.5, -2.5], [10.5, -2.5]];  // from the board's centre
cm3_lens_y = 3.75;  // lens centre from the board's centre, towards the top (approximate)
board_y = plate_y0 + plate[1] / 2;  // board centre from the hinge axis, along the plate

// Lens front relative to the hinge axis, in the hinge's frame (plate hanging, camera looking -z).
lens_offset = [0, board_y + cm3_lens_y, knuckle_r - plate[2] - pad_h - cm3[2]];

// base and clamp
base_size = 180;
base_floor = 3;
base_rim = 20;
boss_d = 42;
boss_h = 55;
clamp_w = 40;
clamp_jaw = 45;   // how far the jaws reach onto the table
clamp_t = 10;
socket_floor = upright || base_style == "weighted" ? base_floor : clamp_t + 5;

// ------------------------------------------------------------------ the layout
function rot_x(v, a) = [v[0], v[1] * cos(a) - v[2] * sin(a), v[1] * sin(a) + v[2] * cos(a)];

// Overhead: mat centre at the origin, the stand on the -y side, the camera aimed towards +y.
lens_pos = [0, -setback, lens_z];
hinge_tilt = upright ? 90 : tilt;  // the front stand's fork points up: the plate then faces +y
hinge_pos = lens_pos - rot_x(lens_offset, hinge_tilt);
min_arm = fork_len + bore / 2 + 3 + 2 * socket_depth + 10;  // the tube shows between its sockets
clear_arm = mat[1] / 2 + (base_style == "weighted" ? base_size / 2 : clamp_jaw) + 10 + hinge_pos[1];
arm = upright ? 0 : arm_length > 0 ? arm_length : max(min_arm, clear_arm);
pole_pos = [0, hinge_pos[1] - arm, 0];
collar_h = 40;
pole_top = upright ? hinge_pos[2] - fork_len : hinge_pos[2] + collar_h / 2 + 10;
pole_cut = pole_top - socket_floor;
arm_cut = arm - fork_len - (bore / 2 + 3);

assert(upright || arm_cut >= 2 * socket_depth + 10, "arm_length too short for collar and fork");
assert(!upright || pole_top - socket_depth >= boss_h + 2,
    "camera too low for the front stand: raise face_bottom or set camera_height");

echo(str("mount: game ", game, ", ", lens, " lens, tilt ", tilt, " deg"));
if (!upright && aim < distance - 0.5)
    echo(str("mount: WARNING: the lens is closer than ", round(distance),
        " mm to the mat's centre: the mat will not fit in the picture"));
echo(str("mount: lens ", round(lens_z), " mm above the table, ", round(aim),
    " mm from the ", upright ? "board's face" : "mat's centre",
    upright ? "" : str(", set back ", round(setback), " mm from the centre")));
if (upright)
    echo(str("mount: cut the post to ", round(pole_cut), " mm; stand the base ",
        round(-pole_pos[1]), " mm in front of the board's face"));
else
    echo(str("mount: cut the pole to ", round(pole_cut), " mm and the arm to ", round(arm_cut),
        " mm; pole axis ", round(-pole_pos[1]), " mm from the mat's centre"));

// ------------------------------------------------------------------ helpers
module tube(length) {
    color("silver") cylinder(d = tube_d, h = length);
}

// An M-screw hole along +y from the origin with a captive-nut slot open at the top (+z).
module screw_and_nut(length, d, nut, slot_y, nut_t = 4.5) {
    rotate([-90, 0, 0]) cylinder(d = d, h = length, $fn = 24);
    translate([-nut * cos(30) / 2 - fit / 2, slot_y, -nut / 2 - fit / 2])
        cube([nut * cos(30) + fit, nut_t, 100]);
}

// ------------------------------------------------------------------ printed parts
// Weighted base: a tray for about 1 kg of ballast around a socket for the pole (z axis).
module base() {
    r = 10;
    difference() {
        union() {
            difference() {
                linear_extrude(base_rim)
                    offset(r = r) square(base_size - 2 * r, center = true);
                translate([0, 0, base_floor])
                    linear_extrude(base_rim)
                        offset(r = r - wall) square(base_size - 2 * r, center = true);
            }
            cylinder(d = boss_d, h = boss_h);
            for (a = [45 : 90 : 315])
                rotate(a) translate([0, -wall / 2, 0])
                    cube([base_size / sqrt(2) - r, wall, base_rim * 0.6]);
        }
        translate([0, 0, base_floor]) cylinder(d = bore, h = boss_h);
        translate([0, -bore / 2 + 1, boss_h - 15])
            rotate(180) screw_and_nut(boss_d, m5_d, m5_nut, (boss_d - bore) / 4, 4.5);
    }
}

// Table-edge clamp: the table on +y, its top at z = 0; the pole socket on the upper jaw.
module clamp() {
    spine = 10;
    difference() {
        union() {
            translate([-clamp_w / 2, -spine, -table_max - clamp_t])
                cube([clamp_w, spine, table_max + 2 * clamp_t]);
            translate([-clamp_w / 2, -spine, 0]) cube([clamp_w, spine + clamp_jaw, clamp_t]);
            translate([-clamp_w / 2, -spine, -table_max - clamp_t])
                cube([clamp_w, spine + clamp_jaw, clamp_t]);
            translate([-clamp_w / 2, clamp_jaw / 2 - clamp_w / 2, 0])
                cube([clamp_w, clamp_w, clamp_t + 40]);
        }
        translate([0, clamp_jaw / 2, socket_floor]) cylinder(d = bore, h = 100);
        // M8 clamping screw up through the lower jaw, its nut trapped in the jaw's underside
        translate([0, clamp_jaw * 0.6, -table_max - clamp_t - eps]) {
            cylinder(d = 8.5, h = clamp_t + 2 * eps, $fn = 24);
            cylinder(d = 13 / cos(30) + fit, h = 6.5, $fn = 6);
        }
    }
}

// Tee collar: slides on the pole (z axis, M5 thumb screw) and holds the arm along +y.
module collar() {
    w = bore + 2 * wall;
    back = bore / 2 + 10;
    front = bore / 2 + 3 + socket_depth;
    difference() {
        translate([-w / 2, -back, -collar_h / 2]) cube([w, back + front, collar_h]);
        translate([0, 0, -collar_h / 2 - eps]) cylinder(d = bore, h = collar_h + 2 * eps);
        translate([0, bore / 2 + 3, 0]) rotate([-90, 0, 0]) cylinder(d = bore, h = front);
        translate([0, -bore / 2 + 1, 0]) rotate(180) screw_and_nut(back, m5_d, m5_nut, 3);
        translate([0, bore / 2 + 3 + socket_depth / 2, 0])
            cylinder(d = tap_d, h = collar_h, $fn = 24);
    }
}

// The two lugs of the hinge around the axis (x) at y = fork_len.
module lugs() {
    gap = knuckle_len + fit;
    for (side = [-1, 1])
        difference() {
            translate([side > 0 ? gap / 2 : -gap / 2 - lug_t, 0, 0])
                hull() {
                    translate([0, 0, -bore / 2]) cube([lug_t, eps, bore]);
                    translate([0, fork_len, 0]) rotate([0, 90, 0]) cylinder(r = lug_r, h = lug_t);
                }
            translate([-50, fork_len, 0]) rotate([0, 90, 0]) cylinder(d = m4_d, h = 100, $fn = 24);
            if (side > 0)  // nut trap on the outer face
                translate([gap / 2 + lug_t - 3.2, fork_len, 0])
                    rotate([0, 90, 0]) cylinder(d = m4_nut, h = 4, $fn = 6);
        }
}

// Fork: a socket on the arm's end (tube along +y, open at y = -socket_depth) and the hinge lugs.
module fork() {
    od = bore + 2 * wall;
    difference() {
        translate([0, -socket_depth, 0]) rotate([-90, 0, 0])
            cylinder(d = od, h = socket_depth + cap_t);
        translate([0, -socket_depth - eps, 0]) rotate([-90, 0, 0])
            cylinder(d = bore, h = socket_depth);
        translate([0, -socket_depth / 2, 0]) rotate([0, 90, 0])
            cylinder(d = tap_d, h = od, $fn = 24);
    }
    lugs();
}

// Tripod fork: the hinge lugs on a block with a captive 1/4"-20 nut, for a camera tripod, a
// phone stand or a lamp arm with a tripod screw (the screw comes in along +y).
module tripod_fork() {
    block = [30, 14, 26];
    nut = 7 / 16 * 25.4 / cos(30) + fit;  // 1/4"-20 hex nut, 7/16" across flats
    difference() {
        translate([-block[0] / 2, -block[1], -block[2] / 2]) cube(block);
        translate([0, -block[1] - eps, 0]) rotate([-90, 0, 0]) cylinder(d = 6.8, h = block[1]);
        translate([0, -block[1] + 4, 0]) rotate([-90, 0, 0]) cylinder(d = nut, h = 6, $fn = 6);
        translate([-nut * cos(30) / 2, -block[1] + 4, 0]) cube([nut * cos(30), 6, 100]);
    }
    lugs();
}

// Camera plate: the hinge knuckle (axis x at the origin), a neck between the lugs, the plate
// and four standoffs for the camera's M2 screws. Drawn hanging: the camera looks down (-z).
module camera_plate() {
    top = knuckle_r;
    difference() {
        union() {
            rotate([0, 90, 0]) cylinder(r = knuckle_r, h = knuckle_len, center = true);
            translate([-knuckle_len / 2, 0, top - plate[2]])
                cube([knuckle_len, plate_y0 + 1, plate[2]]);
            translate([-plate[0] / 2, plate_y0, top - plate[2]]) cube(plate);
            for (h = cm3_holes)
                translate([h[0], board_y + h[1], top - plate[2] - pad_h])
                    cylinder(d = 5, h = pad_h + eps, $fn = 24);
        }
        rotate([0, 90, 0]) cylinder(d = m4_d, h = knuckle_len + 2, center = true, $fn = 24);
        for (h = cm3_holes)
            translate([h[0], board_y + h[1], -50]) cylinder(d = m2_d, h = 100, $fn = 16);
    }
}

// A stand-in for the Camera Module 3 (not printed): board, sensor block and lens.
module camera_module() {
    translate([0, board_y, knuckle_r - plate[2] - pad_h]) {
        color("green") translate([-cm3[0] / 2, -cm3[1] / 2, -1]) cube([cm3[0], cm3[1], 1]);
        color("dimgray") translate([-5.5, cm3_lens_y - 5.5, -cm3[2]]) cube([11, 11, cm3[2] - 1]);
        color("black") translate([0, cm3_lens_y, -cm3[2] - 0.5]) cylinder(d = 6, h = 1);
    }
}

// ------------------------------------------------------------------ the assembly
module hinge_and_camera() {
    translate(hinge_pos) {
        rotate([hinge_tilt, 0, 0]) {
            color("orange") camera_plate();
            camera_module();
        }
        if (upright)
            rotate([90, 0, 0]) translate([0, -fork_len, 0]) color("skyblue") fork();
        else
            translate([0, -fork_len, 0]) color("skyblue") fork();
    }
}

module table_scene() {
    if (upright)
        color("royalblue") translate([-(mat[0] - 20) / 2, 0, face_bottom])
            cube([mat[0] - 20, 15, face_height]);
    else
        color("white") translate([-mat[0] / 2, -mat[1] / 2, -0.5]) cube([mat[0], mat[1], 0.5]);
}

module assembly() {
    table_scene();
    translate(pole_pos) {
        if (base_style == "clamp" && !upright)
            color("skyblue") translate([0, -clamp_jaw / 2, 0]) clamp();
        else
            color("skyblue") base();
        translate([0, 0, socket_floor]) tube(pole_cut);
    }
    if (!upright) {
        translate([pole_pos[0], pole_pos[1], hinge_pos[2]]) color("skyblue") collar();
        translate([0, pole_pos[1] + bore / 2 + 3, hinge_pos[2]])
            rotate([-90, 0, 0]) tube(arm_cut);
    }
    hinge_and_camera();
}

// ------------------------------------------------------------------ what to render
// Printable parts are turned so that they lie flat on the bed.
if (part == "assembly") assembly();
else if (part == "base") base();
else if (part == "clamp") rotate([0, -90, 0]) translate([clamp_w / 2, 0, 0]) clamp();
else if (part == "collar") translate([0, 0, collar_h / 2]) collar();
else if (part == "fork") translate([0, 0, socket_depth]) rotate([90, 0, 0]) fork();
else if (part == "tripod_fork") translate([0, 0, 14]) rotate([90, 0, 0]) tripod_fork();
else if (part == "camera_plate") translate([0, 0, knuckle_r]) rotate([180, 0, 0]) camera_plate();
else assert(false, str("unknown part: ", part));
