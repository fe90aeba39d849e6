// dicetower: the printed tower, parametric (OpenSCAD 2021.01 or later). All sizes in millimetres.
//
// Render every printable part to STL and a PNG view with one command (BUILD.md):
//   python3 hardware/render.py
// or one part by hand:
//   openscad -D 'part="tray"' -o tray.stl tower.scad
// part = "assembly" (the default: every part in place, with the bought parts in grey, for looking at),
//        "inside" (the base's contents without the base: floor plate, Pi, perfboard, solenoid),
//        or one printable part: see PARTS below.
//
// Every part is placed where it sits in the assembly (the tray axis is x = y = 0, the table z = 0, the back,
// where the mast stands, is +y), so its STL can be checked against the others; a slicer drops it onto the bed.
//
// The camera's height is not a free choice: it follows from the capture size, the lens's field of view and
// the scale the reader expects (px_per_mm at the dice's top faces). The echoes at the end (lens height, scale,
// cable run, ...) are what BUILD.md, lighting.md and spec.toml quote; tests/hardware checks that they agree.

PARTS = ["tray", "base", "floor_plate", "solenoid_bracket", "mast", "camera_arm", "camera_cap", "light_ring",
         "diffuser", "shroud", "shroud_door"];
part = "assembly";

// --- Camera: Raspberry Pi Camera Module 3, standard lens (spec.toml [camera]). ---
sensor_px = [4608, 2592];   // the full sensor, 16:9
camera_hfov = 66;           // horizontal field of view over the full sensor width, degrees (102: Wide module)
capture_px = [640, 480];    // [camera] width and height in the config
px_per_mm = 4.4;            // the scale the reader and the simulated camera assume (a 22 mm d20 is 97 px)
die_top_h = 16;             // the scale is met this far above the floor: a 16 mm d6's top face
dice_across = [["d6", 16], ["d10", 18], ["d20", 22]];   // the dice the reader knows, mm across (spec.toml)
closest_focus = 100;        // mm; 50 for the Wide module
cam_board = [25, 24];       // the module's board
cam_holes = [21, 12.5];     // its four M2 holes' spacing
cam_lens_y = -2.25;         // the lens's centre from the holes' centre, along the board (towards the far edge
                            // from the ribbon connector)
cam_depth = 11.5;           // board back to lens front
cam_standoff = 2;           // the board's back clears the cap by this much (parts on the back)
m2_pilot = 1.8;             // M2 self-tapping into plastic

// --- Tray: where the dice land. Matte, one even dark colour: the liner (lighting.md). ---
tray_d = 105;          // inner diameter of the tray floor
tray_wall = 3;         // wall thickness
tray_wall_h = 35;      // wall height above the floor: high enough that a shaken die stays in
tray_floor = 5;        // floor thickness: flat underneath (prints without supports); the plunger strikes its
                       // centre, the grommet screws hold in blind holes in it
liner_t = 2;           // neoprene or felt liner on the floor (bom.md); the dice rest on it
tray_colour = "#33393f";  // print colour of the tray: dark grey, matte (PLA "matte" or PETG, no gloss)
liner_colour = "#2b2f33"; // the liner's colour: dark grey, one even colour

// --- Floating mount: the tray rests on three rubber grommets so the solenoid can kick it. ---
m3_clear = 3.4;        // M3 through a part
m3_pilot = 2.5;        // M3 self-tapping into plastic
grommet_r = tray_d / 2 - 8;   // grommets sit on this radius under the floor
float_gap = 6;         // clearance between the tray and the base's top: the grommets' height

// --- Solenoid under the tray (bom.md L1): measure yours. ---
sol_body_w = 20;       // body width across the mounting face
sol_body_h = 30;       // body height (plunger axis)
sol_body_d = 16;       // body depth
sol_hole_pitch = 15;   // distance between the two mounting screws on the body's face
bracket_t = 4;

// --- Base: a hollow box, the tray floats on its top; a floor plate closes it and carries the electronics. ---
base_h = 60;
base_margin = 30;      // base extends this far past the tray's outer wall at the sides and front
base_w = tray_d + 2 * tray_wall + 2 * base_margin;
base_d = base_w + 40;  // deeper at the back, where the mast stands
base_wall = 3;
post = 10;             // corner posts the floor plate screws into
floor_t = 3;
jack_d = 11;           // panel DC jack (J2)
button_d = 16;         // panel push button (S1)
led_d = 5;             // panel LEDs (LED1-LED3)

// --- Raspberry Pi 4 or 5 (the same board outline and holes), on standoffs on the floor plate. ---
pi_board = [85, 56];
pi_holes = [58, 49];   // M2.5, 3.5 mm in from the board's edges
pi_hole_inset = 3.5;
pi_origin = [-75, 30]; // the board's corner nearest -x, -y
m25_pilot = 2.2;       // M2.5 self-tapping into plastic
standoff_h = 6;

// --- Perfboard with the shaker and light drivers (bom.md), 50 x 70 mm. ---
perf_board = [70, 50];
perf_holes = [66, 46]; // measure yours: corner holes, here 2 mm in from the edges, M2
perf_origin = [7, -85];

// --- Mast and arm: carry the camera and the light ring over the tray's centre. ---
mast_w = 30;
mast_t = 10;
foot_t = 4;            // the mast's foot, screwed to the base's top with four M3 and nuts
arm_w = 30;
arm_t = 6;
ribbon_w = 18;         // slot for the camera's 16 mm ribbon (and the light's two wires)

// --- Light ring: LED strip inside, diffuser underneath (lighting.md); hangs from the arm. ---
ring_drop = 25;        // the ring's top sits this far below the lens
ring_id = 70;          // bore: clear of the lens's view cone (asserted below)
ring_od = 120;
ring_h = 14;
diffuser_t = 3;        // opal acrylic ring or a white print this thick
diffuser_fit = 0.3;    // clearance each side in the ring's seat
diffuser_od = ring_od - 2 - 2 * diffuser_fit;   // the seat's outer edge, less the clearance
diffuser_id = ring_id + 2 + 2 * diffuser_fit;   // the seat's inner edge, plus the clearance: clear of the view
chimney_t = 2;         // the tube from the ring up to the camera cap: no light from above
chimney_seat = 2;      // the chimney stands this deep in a groove in the ring's top
cap_t = 5;

// --- Shroud: closes the tower's sides so the tray light is the only light (lighting.md). ---
shroud_t = 2;
shroud_gap = 1;        // between the light ring and the shroud
groove_d = 1.5;        // the groove in the base's top the shroud stands in
door_angle = 80;       // the front opening, for loading dice: the shroud's whole height, so nothing bridges it
door_t = 2;
rail_angle = 8;
rail_fit = 0.6;

$fn = 64;
eps = 0.01;

// ---------------------------------------------------------------------------------------------------------
// Derived geometry. The frame is the capture's aspect ratio cut from the middle of the sensor (libcamera
// crops rather than stretches): at 4:3 from a 16:9 sensor the full height and 3/4 of the width.
crop_w = min(sensor_px[0], sensor_px[1] * capture_px[0] / capture_px[1]);
crop_h = min(sensor_px[1], sensor_px[0] * capture_px[1] / capture_px[0]);
tan_h = tan(camera_hfov / 2) * crop_w / sensor_px[0];   // half-width of the frame per mm of distance
tan_v = tan(camera_hfov / 2) * crop_h / sensor_px[0];
tan_diag = sqrt(tan_h * tan_h + tan_v * tan_v);
function px_per_mm_at(distance) = capture_px[0] / (2 * distance * tan_h);

top_distance = capture_px[0] / (2 * tan_h * px_per_mm);   // lens to the dice's top faces
lens_h = top_distance + die_top_h;                         // lens above the floor (the liner's top)

tray_top_z = base_h + float_gap;            // underside of the tray floor
floor_z = tray_top_z + tray_floor + liner_t; // the dice rest here
lens_z = floor_z + lens_h;
cap_z = lens_z + cam_depth + cam_standoff;  // the cap's underside: the camera hangs under it
arm_z = cap_z + cap_t;                      // the arm lies on the cap
ring_top_z = lens_z - ring_drop;
ring_z = ring_top_z - ring_h;
mast_y = base_d / 2 - base_wall - mast_t;   // the mast stands at the back
shroud_r = ring_od / 2 + shroud_gap;        // inner radius
shroud_R = shroud_r + shroud_t;
rail_r = shroud_R + door_t + rail_fit;      // the door slides between the shroud and the rails' lips
cap_r = ring_id / 2 + 2 + chimney_t;      // the chimney stands on the ring's top, 2 mm out from the bore
cap_screw_y = [-(cap_r - 5), cap_r - 5];    // two M3 from the arm into the cap
arm_y0 = -cap_r;
ribbon_y = cam_lens_y * -1 + cam_board[1] / 2 + 1;   // slot beside the board's connector edge (+y)
cam_holes_xy = [for (x = [-1, 1], y = [-1, 1]) [x * cam_holes[0] / 2, y * cam_holes[1] / 2 - cam_lens_y]];
pi_holes_xy = [for (i = [0, 1], j = [0, 1])
    [pi_origin[0] + pi_hole_inset + i * pi_holes[0], pi_origin[1] + pi_hole_inset + j * pi_holes[1]]];
perf_inset = [(perf_board[0] - perf_holes[0]) / 2, (perf_board[1] - perf_holes[1]) / 2];
perf_holes_xy = [for (i = [0, 1], j = [0, 1])
    [perf_origin[0] + perf_inset[0] + i * perf_holes[0], perf_origin[1] + perf_inset[1] + j * perf_holes[1]]];
post_xy = [for (x = [-1, 1], y = [-1, 1])
    [x * (base_w / 2 - base_wall - post / 2), y * (base_d / 2 - base_wall - post / 2)]];
grommet_xy = [for (a = [90, 210, 330]) [grommet_r * cos(a), grommet_r * sin(a)]];
bracket_screw_xy = [for (s = [-1, 1]) [s * (sol_body_w / 2 + bracket_t + 5), 0]];
foot_screw_xy = [for (x = [-1, 1], y = [mast_y - 12, mast_y + 5]) [x * (mast_w / 2 + 6), y]];
arm_screw_xy = [for (x = [-1, 1]) [x * (mast_w / 2 - 5), mast_y + mast_t / 2 + 1]];

// The view cone, at the ring's underside (its deepest point), stays inside the ring's bore.
view_r_at_ring = (ring_drop + ring_h) * tan_diag + 3;
assert(view_r_at_ring < ring_id / 2, "light ring bore too small: it would shade the lens's view");
assert(lens_h >= closest_focus, "lens nearer than the camera's closest focus: lower px_per_mm or capture more pixels");
// A die against the wall is whole in the frame's short side, and the whole floor is in the frame.
assert(tray_d / 2 <= top_distance * tan_v, "the tray is wider than the frame at the dice's tops: a die at the wall is cut off");
assert(ring_od / 2 < base_w / 2 && rail_r + 2 < base_w / 2, "the shroud does not fit on the base");

module m3_screw_hole(h) { cylinder(d = m3_clear, h = h); }

module tray() {
    translate([0, 0, tray_top_z]) difference() {
        union() {
            cylinder(d = tray_d + 2 * tray_wall, h = tray_floor + tray_wall_h);
        }
        translate([0, 0, tray_floor]) cylinder(d = tray_d, h = tray_wall_h + 1);
        // M3 from below through the grommet, into a blind pilot: the floor stays whole under the liner
        for (p = grommet_xy)
            translate([p[0], p[1], -1]) cylinder(d = m3_pilot, h = tray_floor);
    }
}

module liner() {
    translate([0, 0, tray_top_z + tray_floor]) cylinder(d = tray_d - 1, h = liner_t);
}

module base() {
    difference() {
        union() {
            difference() {
                translate([-base_w / 2, -base_d / 2, 0]) cube([base_w, base_d, base_h]);
                // hollow, open at the bottom: the floor plate closes it
                translate([-base_w / 2 + base_wall, -base_d / 2 + base_wall, -eps])
                    cube([base_w - 2 * base_wall, base_d - 2 * base_wall, base_h - base_wall]);
            }
            for (p = post_xy) translate([p[0] - post / 2, p[1] - post / 2, 0]) cube([post, post, base_h - eps]);
        }
        // a groove in the top locates the shroud (the base prints top-down, so the top stays flat on the bed)
        translate([0, 0, base_h - groove_d]) difference() {
            cylinder(r = shroud_R + 0.4, h = groove_d + 1);
            translate([0, 0, -1]) cylinder(r = shroud_r - 0.4, h = groove_d + 3);
        }
        // floor plate screws (M3 self-tapping into the posts)
        for (p = post_xy) translate([p[0], p[1], -eps]) cylinder(d = m3_pilot, h = 12);
        // grommet screws: M3 up through the base's top, the grommet, into the tray
        for (p = grommet_xy) translate([p[0], p[1], base_h - base_wall - 1]) m3_screw_hole(base_wall + 2);
        // the solenoid's plunger passes through the top; the bracket's two screws beside it
        translate([0, 0, base_h - base_wall - 1]) cylinder(d = sol_body_w + 2, h = base_wall + 2);
        for (p = bracket_screw_xy) translate([p[0], p[1], base_h - base_wall - 1]) m3_screw_hole(base_wall + 2);
        // front panel: button and three LEDs
        translate([-30, -base_d / 2 - 1, base_h / 2]) rotate([-90, 0, 0]) cylinder(d = button_d, h = base_wall + 2);
        for (i = [0:2])
            translate([5 + 12 * i, -base_d / 2 - 1, base_h / 2]) rotate([-90, 0, 0]) cylinder(d = led_d, h = base_wall + 2);
        // back wall: DC jack, and a slot for a USB cable or a keyboard while setting up
        translate([base_w / 4, base_d / 2 - base_wall - 1, base_h / 2]) rotate([-90, 0, 0]) cylinder(d = jack_d, h = base_wall + 2);
        translate([-base_w / 4 - 15, base_d / 2 - base_wall - 1, 10]) cube([30, base_wall + 2, 12]);
        // mast socket, the mast foot's four screws, and the ribbon's way down in front of the mast
        translate([-mast_w / 2 - 0.3, mast_y - 0.3, base_h - base_wall - 1]) cube([mast_w + 0.6, mast_t + 0.6, base_wall + 2]);
        for (p = foot_screw_xy) translate([p[0], p[1], base_h - base_wall - 1]) m3_screw_hole(base_wall + 2);
        ribbon_slot(base_h - base_wall - 1, base_wall + 2);
    }
}

module ribbon_slot(z, h) {
    translate([-ribbon_w / 2, mast_y - 1, z]) cube([ribbon_w, 3.5, h]);
}

module floor_plate() {
    translate([0, 0, -floor_t]) difference() {
        union() {
            translate([-base_w / 2, -base_d / 2, 0]) cube([base_w, base_d, floor_t]);
            for (p = concat(pi_holes_xy, perf_holes_xy))
                translate([p[0], p[1], floor_t - eps]) cylinder(d = 6, h = standoff_h + eps);
        }
        for (p = post_xy) translate([p[0], p[1], -1]) m3_screw_hole(floor_t + 2);
        for (p = pi_holes_xy) translate([p[0], p[1], 1]) cylinder(d = m25_pilot, h = floor_t + standoff_h);
        for (p = perf_holes_xy) translate([p[0], p[1], 1]) cylinder(d = m2_pilot, h = floor_t + standoff_h);
        // vents under the Pi
        for (i = [0:4])
            translate([pi_origin[0] + 18 + 12 * i, pi_origin[1] + 12, -1]) cube([4, pi_board[1] - 24, floor_t + 2]);
    }
}

module solenoid_bracket() {
    // Hangs from the underside of the base's top; the solenoid stands plunger-up on the tray's axis.
    top_z = base_h - base_wall;
    span = sol_body_w + 2 * bracket_t + 20;
    difference() {
        union() {
            translate([-span / 2, sol_body_d / 2, top_z - sol_body_h - bracket_t])
                cube([span, bracket_t, sol_body_h + bracket_t]);
            translate([-span / 2, -sol_body_d / 2, top_z - bracket_t])
                cube([span, sol_body_d + bracket_t, bracket_t]);
        }
        // two screws through the back plate into the solenoid body
        for (s = [-1, 1])
            translate([s * sol_hole_pitch / 2, sol_body_d / 2 - 1, top_z - sol_body_h / 2]) rotate([-90, 0, 0])
                m3_screw_hole(bracket_t + 2);
        // the plunger's bore, and two screws up through the base's top (nuts above)
        translate([0, 0, top_z - bracket_t - 1]) cylinder(d = sol_body_w * 0.6, h = bracket_t + 2);
        for (p = bracket_screw_xy) translate([p[0], p[1], top_z - bracket_t - 1]) m3_screw_hole(bracket_t + 2);
    }
}

module mast() {
    difference() {
        union() {
            translate([-mast_w / 2, mast_y, base_h - base_wall]) cube([mast_w, mast_t, arm_z - base_h + base_wall]);
            translate([-mast_w / 2 - 12, mast_y - 20, base_h]) cube([mast_w + 24, mast_t + 20, foot_t]);
        }
        // the channel for the camera ribbon and the light's two wires, down the mast's front face
        translate([-ribbon_w / 2, mast_y - 1, base_h - base_wall - 1]) cube([ribbon_w, 3.5, arm_z - base_h + base_wall + 2]);
        for (p = foot_screw_xy) translate([p[0], p[1], base_h - 1]) m3_screw_hole(foot_t + 2);
        for (p = arm_screw_xy) translate([p[0], p[1], arm_z - 15]) cylinder(d = m3_pilot, h = 16);
    }
}

module camera_arm() {
    difference() {
        translate([-arm_w / 2, arm_y0, arm_z]) cube([arm_w, mast_y + mast_t - arm_y0, arm_t]);
        for (p = concat(arm_screw_xy, [for (y = cap_screw_y) [0, y]]))
            translate([p[0], p[1], arm_z - 1]) m3_screw_hole(arm_t + 2);
        // the ribbon comes up beside the camera and goes down at the mast
        translate([-ribbon_w / 2, ribbon_y, arm_z - 1]) cube([ribbon_w, 3, arm_t + 2]);
        ribbon_slot(arm_z - 1, arm_t + 2);
    }
}

module light_ring() {
    // The ring: the LED strip in a channel open downwards, the diffuser in a seat under it. It prints upside
    // down (its flat top on the bed); the camera cap's chimney stands in the groove on its top, glued.
    difference() {
        translate([0, 0, ring_z]) cylinder(d = ring_od, h = ring_h);
        // channel for the LED strip, open downward behind the diffuser
        translate([0, 0, ring_z - eps]) difference() {
            cylinder(d = ring_od - 6, h = ring_h - 3);
            cylinder(r = cap_r + 2, h = ring_h);
        }
        translate([0, 0, ring_z - 1]) cylinder(d = ring_id, h = ring_h + 2);
        // seat for the diffuser ring
        translate([0, 0, ring_z - eps]) difference() {
            cylinder(d = ring_od - 2, h = diffuser_t);
            cylinder(d = ring_id + 2, h = diffuser_t);
        }
        // the groove the chimney stands in
        translate([0, 0, ring_top_z - chimney_seat]) difference() {
            cylinder(r = cap_r + 0.2, h = chimney_seat + 1);
            translate([0, 0, -1]) cylinder(r = cap_r - chimney_t - 0.2, h = chimney_seat + 3);
        }
        // the LED strip's two wires leave through the ring's top at the back
        translate([0, (ring_od + ring_id) / 4, ring_top_z - 4]) cylinder(d = 4, h = 5);
    }
}

module diffuser() {
    // The ring under the LED strip, in the light ring's seat: the light reaches the tray only through it
    // (lighting.md). Printed flat in white PLA, or cut from 3 mm opal acrylic to these sizes (bom.md).
    translate([0, 0, ring_z]) difference() {
        cylinder(d = diffuser_od, h = diffuser_t);
        translate([0, 0, -1]) cylinder(d = diffuser_id, h = diffuser_t + 2);
    }
}

module camera_cap() {
    // The cap the camera screws under, on a chimney down to the light ring: no light from above reaches the
    // tray. Prints cap-down; the arm's two screws hold it (and the ring glued to it) up.
    difference() {
        union() {
            translate([0, 0, ring_top_z - chimney_seat]) cylinder(r = cap_r, h = cap_z - ring_top_z + chimney_seat + eps);
            translate([0, 0, cap_z]) cylinder(r = cap_r, h = cap_t);
        }
        translate([0, 0, ring_top_z - chimney_seat - 1]) cylinder(r = cap_r - chimney_t, h = cap_z - ring_top_z + chimney_seat + 1);
        // the camera's M2 screws, the ribbon's slot and the arm's two screws
        for (p = cam_holes_xy) translate([p[0], p[1], cap_z - 1]) cylinder(d = m2_pilot, h = cap_t - 1);
        translate([-ribbon_w / 2, ribbon_y, cap_z - 1]) cube([ribbon_w, 3, cap_t + 2]);
        for (y = cap_screw_y) translate([0, y, cap_z - 1]) cylinder(d = m3_pilot, h = cap_t + 2);
    }
    // the bosses the camera's board rests on, clear of the parts on its back
    for (p = cam_holes_xy) translate([p[0], p[1], cap_z - cam_standoff]) difference() {
        cylinder(d = 5, h = cam_standoff + eps);
        translate([0, 0, -1]) cylinder(d = m2_pilot, h = cam_standoff + 2);
    }
}

module arc(r0, r1, h, a0, a) {
    rotate(a0) rotate_extrude(angle = a) translate([r0, 0]) square([r1 - r0, h]);
}

module shroud() {
    h = ring_top_z - base_h;
    translate([0, 0, base_h]) {
        difference() {
            cylinder(r = shroud_R, h = h);
            translate([0, 0, -1]) cylinder(r = shroud_r, h = h + 2);
            translate([0, 0, -1]) arc(shroud_r - 1, shroud_R + 1, h + 2, -90 - door_angle / 2, door_angle);
        }
        // two rails beside the opening: the door slides down between them and the shroud
        for (s = [-1, 1]) {
            a_edge = -90 + s * (door_angle / 2 + 2);   // where the door's edge rests
            a_back = -90 + s * (door_angle / 2 + rail_angle);
            arc(rail_r, rail_r + 1.6, h, min(a_edge, a_back), abs(a_back - a_edge));
            arc(shroud_R - eps, rail_r + 1.6, h, s > 0 ? a_back - 1.5 : a_back, 1.5);
        }
    }
}

module shroud_door() {
    // Slides down between the rails and the shroud; lift it by its grip to load dice.
    h = ring_top_z - base_h;
    overlap = rail_angle - 3.5;   // how far past the opening the door reaches under each rail
    r0 = shroud_R + rail_fit / 2;
    translate([0, 0, base_h]) {
        arc(r0, r0 + door_t, h, -90 - door_angle / 2 - 2 - overlap, door_angle + 2 * (2 + overlap));
        translate([0, 0, h - 12]) arc(r0 + door_t - eps, r0 + door_t + 6, 4, -96, 12);
    }
}

module bought_parts(camera = true) {
    // Not printed: shown in the assembly and the "inside" view.
    color("green") for (b = [[pi_origin, pi_board], [perf_origin, perf_board]])
        translate([b[0][0], b[0][1], standoff_h]) cube([b[1][0], b[1][1], 1.6]);
    color("silver") translate([-sol_body_w / 2, -sol_body_d / 2, base_h - base_wall - bracket_t - sol_body_h])
        cube([sol_body_w, sol_body_d, sol_body_h]);
    if (camera) color("darkgreen") translate([-cam_board[0] / 2, -cam_board[1] / 2 - cam_lens_y, cap_z - cam_standoff - 1])
        cube([cam_board[0], cam_board[1], 1]);
    if (camera) color("black") translate([0, 0, lens_z]) cylinder(d = 8, h = cam_depth - 1);
}

if (part == "tray") tray();
else if (part == "base") base();
else if (part == "floor_plate") floor_plate();
else if (part == "solenoid_bracket") solenoid_bracket();
else if (part == "mast") mast();
else if (part == "camera_arm") camera_arm();
else if (part == "light_ring") light_ring();
else if (part == "diffuser") diffuser();
else if (part == "camera_cap") camera_cap();
else if (part == "shroud") shroud();
else if (part == "shroud_door") shroud_door();
else if (part == "inside") {
    color("dimgray") floor_plate();
    color("silver") solenoid_bracket();
    bought_parts(camera = false);
}
else if (part == "assembly") {
    color("dimgray") floor_plate();
    color("dimgray") base();
    color(tray_colour) tray();
    color(liner_colour) liner();
    color("silver") solenoid_bracket();
    color("dimgray") mast();
    color("dimgray") camera_arm();
    color("white") light_ring();
    color("white", 0.8) diffuser();
    color("dimgray") camera_cap();
    color("dimgray", 0.35) shroud();
    color("dimgray", 0.35) shroud_door();
    bought_parts();
}
else assert(false, str("unknown part \"", part, "\"; one of ", PARTS, ", \"inside\" or \"assembly\""));

// Figures the documents quote (spec.toml, BUILD.md, lighting.md): tests/hardware reads them from here.
// The levels (z in the STLs' frame: the base's underside is 0) say where tests/hardware cuts the parts.
echo(str("level base top: ", base_h, " mm"));
echo(str("level lens: ", lens_z, " mm"));
echo(str("level tray underside: ", tray_top_z, " mm"));
echo(str("level dice rest: ", floor_z, " mm"));
echo(str("level ring top: ", ring_top_z, " mm"));
echo(str("level camera cap underside: ", cap_z, " mm"));
echo(str("level arm underside: ", arm_z, " mm"));
echo(str("lens height above the tray floor: ", lens_h, " mm"));
echo(str("lens above the table: ", lens_z + floor_t, " mm"));
echo(str("pixels per mm at the dice tops: ", px_per_mm_at(top_distance)));
echo(str("pixels per mm on the tray floor: ", px_per_mm_at(lens_h)));
echo(str("frame on the tray floor, short side: ", capture_px[1] / px_per_mm_at(lens_h), " mm"));
echo(str("focus, dioptres: ", 1000 / lens_h));
for (d = dice_across) echo(str(d[0], " across in the photo: ", d[1] * px_per_mm_at(top_distance), " px"));
echo(str("diffuser outer diameter: ", diffuser_od, " mm"));
echo(str("diffuser inner diameter: ", diffuser_id, " mm"));
// The tray's outline in the frame, for `dicetower tower calibrate --tray` (pixels, the tray centred in the
// frame): the wall at the dice's tops, so a die against the wall is inside it.
function joined(v, i = 0) = i >= len(v) ? "" : str(i > 0 ? "," : "", v[i], joined(v, i + 1));
tray_px = tray_d / 2 * px_per_mm;
echo(str("tray outline for calibrate --tray: ", joined([for (a = [0:30:330], c = [0, 1])
    round(capture_px[c] / 2 + tray_px * (c == 0 ? cos(a) : sin(a)))])));
// the ribbon: camera to the arm's mast end, down the mast, through the base's top, to the Pi's farthest corner
cable_run = (mast_y - ribbon_y) + (arm_z + arm_t - base_h) + (base_h - standoff_h)
    + max([for (c = [[0, 0], [1, 0], [0, 1], [1, 1]])
        norm([pi_origin[0] + c[0] * pi_board[0], pi_origin[1] + c[1] * pi_board[1]] - [0, mast_y])]);
echo(str("camera cable run: ", cable_run, " mm"));
