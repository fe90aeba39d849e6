// dicetower: tray and tower, parametric (OpenSCAD 2021.01 or later). All sizes in millimetres.
//
// Render one printable part at a time:
//   openscad -D 'part="tray"' -o tray.stl tower.scad
// part = "assembly" (the default: every part in place, for looking at), "tray", "base", "mast",
//        "camera_arm", "light_ring", "solenoid_bracket".
//
// The camera's height is not a free choice: it follows from the tray's size and the lens's field of view,
// so that the whole tray floor (plus a margin) fills the frame's short side. Change tray_d or camera_vfov and
// the mast follows. The values echoed at the end (lens height, cable run, pixels per millimetre) are the ones
// to check against bom.md and the camera config.

part = "assembly";

// --- Tray: where the dice land. Matte liner on the floor (lighting.md). ---
tray_d = 120;          // inner diameter of the tray floor
tray_wall = 3;         // wall thickness
tray_wall_h = 35;      // wall height above the floor: high enough that a shaken die stays in
tray_floor = 3;        // floor thickness
strike_pad_d = 20;     // thickened disc under the floor's centre, where the plunger strikes
strike_pad_t = 3;

// --- Floating mount: the tray rests on three rubber grommets so the solenoid can kick it. ---
grommet_hole = 3.4;    // M3 through the grommet
grommet_seat_d = 10;   // grommet outer diameter
grommet_r = tray_d / 2 - 8;   // grommets sit on this radius under the floor
float_gap = 6;         // clearance between the tray and the base's top

// --- Solenoid under the tray (bom.md L1): measure yours. ---
sol_body_w = 20;       // body width across the mounting face
sol_body_h = 30;       // body height (plunger axis)
sol_body_d = 16;       // body depth
sol_hole_pitch = 15;   // distance between the two mounting screws on the body's face
sol_stroke_gap = 1;    // plunger tip below the strike pad at rest

// --- Camera: Raspberry Pi Camera Module 3, standard lens. ---
camera_vfov = 41;      // vertical (short side) field of view in degrees; 67 for the Wide module
camera_hfov = 66;      // horizontal field of view in degrees; 102 for the Wide module
camera_margin = 5;     // extra floor seen past the tray's inner edge, on each side
cam_board = [25, 24];  // the module's board
cam_holes = [21, 12.5];// its M2 mounting holes' spacing
frame_short_px = 480;  // the camera config's height (pixels along the short side)

// Lens height above the tray floor so the short side of the frame spans the tray plus the margins.
lens_h = (tray_d / 2 + camera_margin) / tan(camera_vfov / 2);

// --- Base: holds the Pi, the perfboard, the supply jack; the tray floats on its top. ---
base_h = 60;
base_margin = 25;      // base extends this far past the tray's outer wall at the sides and front
base_w = tray_d + 2 * tray_wall + 2 * base_margin;
base_d = base_w + 40;  // deeper at the back, where the mast stands
base_wall = 3;
jack_d = 11;           // panel DC jack (J2)
button_d = 16;         // panel push button (S1)
led_d = 5;             // panel LEDs (LED1-LED3)

// --- Mast and arm: carry the camera and the light ring over the tray's centre. ---
mast_w = 30;
mast_t = 8;
arm_w = 30;
arm_t = 6;

// --- Light ring: LED strip inside, diffuser underneath (lighting.md). ---
ring_drop = 25;        // ring sits this far below the lens
ring_id = 70;          // inner diameter: clear of the lens's view cone at that depth (asserted below)
ring_od = 120;
ring_h = 14;
diffuser_t = 3;        // opal acrylic ring or a white print this thick

$fn = 64;
eps = 0.01;

tray_top_z = base_h + float_gap;            // underside of the tray floor
floor_z = tray_top_z + tray_floor;          // top of the tray floor: the dice sit here
lens_z = floor_z + lens_h;
arm_z = lens_z + 8;                         // the camera hangs under the arm
mast_y = base_d / 2 - mast_t - base_wall;   // the mast stands at the back

// Half the view cone's width at the ring's depth must stay inside the ring's bore.
view_r_at_ring = ring_drop * tan(max(camera_vfov, camera_hfov) / 2) + 3;
assert(view_r_at_ring < ring_id / 2, "light ring bore too small: it would shade the lens's view");
assert(lens_h >= 100, "lens closer than Camera Module 3's 100 mm closest focus: enlarge tray_d or use the Wide module");

module tray() {
    difference() {
        union() {
            cylinder(d = tray_d + 2 * tray_wall, h = tray_floor + tray_wall_h);
            translate([0, 0, -strike_pad_t]) cylinder(d = strike_pad_d, h = strike_pad_t + eps);
            for (a = [90, 210, 330])
                rotate(a) translate([grommet_r, 0, -float_gap / 2])
                    cylinder(d = grommet_seat_d + 4, h = float_gap / 2 + eps);
        }
        translate([0, 0, tray_floor]) cylinder(d = tray_d, h = tray_wall_h + 1);
        for (a = [90, 210, 330])
            rotate(a) translate([grommet_r, 0, -float_gap]) cylinder(d = grommet_hole, h = float_gap + tray_floor - 1);
    }
}

module base() {
    difference() {
        translate([-base_w / 2, -base_d / 2, 0]) cube([base_w, base_d, base_h]);
        // hollow, open at the bottom for a removable floor plate
        translate([-base_w / 2 + base_wall, -base_d / 2 + base_wall, -eps])
            cube([base_w - 2 * base_wall, base_d - 2 * base_wall, base_h - base_wall]);
        // grommet screws
        for (a = [90, 210, 330])
            rotate(a) translate([grommet_r, 0, base_h - base_wall - 1]) cylinder(d = grommet_hole, h = base_wall + 2);
        // the solenoid's plunger passes through the top
        translate([0, 0, base_h - base_wall - 1]) cylinder(d = sol_body_w + 2, h = base_wall + 2);
        // front panel: button and three LEDs
        translate([-30, -base_d / 2 - 1, base_h / 2]) rotate([-90, 0, 0]) cylinder(d = button_d, h = base_wall + 2);
        for (i = [0:2])
            translate([5 + 12 * i, -base_d / 2 - 1, base_h / 2]) rotate([-90, 0, 0]) cylinder(d = led_d, h = base_wall + 2);
        // back wall: DC jack and a slot for the camera cable and USB-C
        translate([base_w / 4, base_d / 2 - base_wall - 1, base_h / 2]) rotate([-90, 0, 0]) cylinder(d = jack_d, h = base_wall + 2);
        translate([-base_w / 4 - 15, base_d / 2 - base_wall - 1, 10]) cube([30, base_wall + 2, 12]);
        // mast socket
        translate([-mast_w / 2 - 0.3, mast_y - 0.3, base_h - base_wall - 1]) cube([mast_w + 0.6, mast_t + 0.6, base_wall + 2]);
    }
}

module solenoid_bracket() {
    // Hangs from the underside of the base's top; the solenoid stands plunger-up on its axis.
    plate_t = 4;
    top_z = base_h - base_wall;
    difference() {
        union() {
            translate([-sol_body_w / 2 - plate_t - 10, sol_body_d / 2, top_z - sol_body_h - plate_t])
                cube([sol_body_w + 2 * plate_t + 20, plate_t, sol_body_h + plate_t]);
            translate([-sol_body_w / 2 - plate_t - 10, -sol_body_d / 2, top_z - plate_t])
                cube([sol_body_w + 2 * plate_t + 20, sol_body_d + plate_t, plate_t]);
        }
        // two screws through the back plate into the solenoid body
        for (s = [-1, 1])
            translate([s * sol_hole_pitch / 2, sol_body_d / 2 - 1, top_z - sol_body_h / 2]) rotate([-90, 0, 0])
                cylinder(d = 3.4, h = plate_t + 2);
        // the plunger's bore and two screws up into the base's top
        translate([0, 0, top_z - plate_t - 1]) cylinder(d = sol_body_w * 0.6, h = plate_t + 2);
        for (s = [-1, 1])
            translate([s * (sol_body_w / 2 + plate_t + 5), 0, top_z - plate_t - 1]) cylinder(d = 3.4, h = plate_t + 2);
    }
}

module mast() {
    difference() {
        translate([-mast_w / 2, mast_y, base_h - base_wall]) cube([mast_w, mast_t, arm_z - base_h + base_wall + arm_t]);
        // cable channel for the camera ribbon and the light's two wires
        translate([-8, mast_y - eps, base_h]) cube([16, 2, arm_z - base_h]);
    }
}

module camera_arm() {
    difference() {
        union() {
            translate([-arm_w / 2, -cam_board[1] / 2 - 6, arm_z]) cube([arm_w, mast_y + cam_board[1] / 2 + 6 + mast_t, arm_t]);
            // camera plate under the arm's end
            translate([-cam_board[0] / 2 - 3, -cam_board[1] / 2 - 3, arm_z - 4]) cube([cam_board[0] + 6, cam_board[1] + 6, 4 + eps]);
        }
        // lens opening and the module's four M2 holes
        translate([0, 0, arm_z - 5]) cylinder(d = 11, h = arm_t + 6);
        for (x = [-1, 1], y = [-1, 1])
            translate([x * cam_holes[0] / 2, y * cam_holes[1] / 2 - 2.25, arm_z - 5]) cylinder(d = 2.2, h = arm_t + 6);
        // ribbon slot
        translate([-9, cam_board[1] / 2 + 2, arm_z - 1]) cube([18, 2, arm_t + 2]);
    }
}

module light_ring() {
    ring_z = lens_z - ring_drop - ring_h;
    difference() {
        translate([0, 0, ring_z]) cylinder(d = ring_od, h = ring_h);
        // channel for the LED strip, open downward behind the diffuser
        translate([0, 0, ring_z - eps]) difference() {
            cylinder(d = ring_od - 6, h = ring_h - 3);
            cylinder(d = ring_id + 6, h = ring_h);
        }
        translate([0, 0, ring_z - 1]) cylinder(d = ring_id, h = ring_h + 2);
        // seat for the diffuser ring
        translate([0, 0, ring_z - eps]) difference() {
            cylinder(d = ring_od - 2, h = diffuser_t);
            cylinder(d = ring_id + 2, h = diffuser_t);
        }
    }
    // two spokes to the arm
    for (s = [-1, 1])
        translate([s * (ring_id / 2 + 4) - 2, -2, ring_z + ring_h - eps]) cube([4, 4, arm_z - ring_z - ring_h + 2 * eps]);
}

if (part == "tray") tray();
else if (part == "base") base();
else if (part == "mast") mast();
else if (part == "camera_arm") camera_arm();
else if (part == "light_ring") light_ring();
else if (part == "solenoid_bracket") solenoid_bracket();
else {
    color("dimgray") base();
    color("black") translate([0, 0, tray_top_z]) tray();
    color("silver") solenoid_bracket();
    color("dimgray") mast();
    color("dimgray") camera_arm();
    color("white") light_ring();
}

// Figures to check against bom.md and the camera config.
echo(str("lens height above the tray floor: ", lens_h, " mm"));
echo(str("lens above the table: ", lens_z, " mm"));
echo(str("camera cable run (arm + mast + base): ", mast_y + (arm_z - base_h) + 60, " mm"));
echo(str("pixels per mm on the tray floor: ", frame_short_px / (tray_d + 2 * camera_margin)));
