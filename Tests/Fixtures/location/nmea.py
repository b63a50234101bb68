#!/usr/bin/env python3
"""NMEA tracks for the location tests (issue 23), replayed by gpsd's gpsfake.

  nmea.py make DIR          writes walk.nmea, drive-with-stop.nmea and tunnel.nmea (kept in git)
  nmea.py lead SRC DEST SECONDS
                            copies SRC after SECONDS seconds of fix-less sentences (times before
                            the track's start): gpsd spends its first second or so finding the
                            device's protocol, and a fast replay (gpsfake -c 0.002) would lose
                            the track's start to it.
  nmea.py retime SRC DEST [LAT,LON]
                            copies SRC with its first fix moved to now (times and dates shifted
                            alike, checksums recomputed): gpsd reports the fixes as current.
                            With LAT,LON the track is also moved to start there (the demo).

A fix is an RMC and a GGA sentence, one per second of track time; a fix-less second is an RMC
with status V and a GGA of quality 0 (a tunnel).
"""
import datetime
import math
import sys

START = datetime.datetime(2026, 1, 1, 8, 0, 0, tzinfo=datetime.timezone.utc)
HOME = (-33.8688, 151.2093)  # latitude, longitude (south and east: signs matter)


def checksum(body):
    value = 0
    for ch in body:
        value ^= ord(ch)
    return "%02X" % value


def sentence(body):
    return "$%s*%s\r\n" % (body, checksum(body))


def coordinate(value, degree_digits, positive, negative):
    hemisphere = positive if value >= 0 else negative
    value = abs(value)
    degrees = int(value)
    minutes = (value - degrees) * 60
    return ("%0" + str(degree_digits) + "d%07.4f") % (degrees, minutes), hemisphere


def fix_sentences(when, lat, lon, speed_ms, has_fix):
    hms = when.strftime("%H%M%S") + ".00"
    dmy = when.strftime("%d%m%y")
    la, ns = coordinate(lat, 2, "N", "S")
    lo, ew = coordinate(lon, 3, "E", "W")
    if not has_fix:
        return sentence("GPRMC,%s,V,,,,,,,%s,,,N" % (hms, dmy)) + sentence("GPGGA,%s,,,,,0,00,99.9,,M,,M,," % hms)
    knots = speed_ms * 1.943844
    return (sentence("GPRMC,%s,A,%s,%s,%s,%s,%.1f,0.0,%s,,,A" % (hms, la, ns, lo, ew, knots, dmy))
            + sentence("GPGGA,%s,%s,%s,%s,%s,1,08,0.9,45.0,M,0.0,M,," % (hms, la, ns, lo, ew)))


def track(points):
    """points: (seconds, lat, lon, speed m/s, has_fix) per second."""
    return "".join(fix_sentences(START + datetime.timedelta(seconds=t), lat, lon, v, f) for t, lat, lon, v, f in points)


def north(metres):
    return HOME[0] + metres / 111_320.0


def walk():
    # 20 s standing at home, then 100 s walking north at 1.4 m/s.
    out = [(t, HOME[0], HOME[1], 0.0, True) for t in range(20)]
    out += [(20 + t, north(1.4 * t), HOME[1], 1.4, True) for t in range(100)]
    return out


def drive_with_stop():
    # 10 min at 15 m/s, 30 min stopped, 10 min on.
    out, position = [], 0.0
    for t in range(3000):
        moving = t < 600 or t >= 2400
        if moving:
            position += 15
        out.append((t, north(position), HOME[1], 15.0 if moving else 0.0, True))
    return out


def tunnel():
    # 30 s driving, 60 s without a fix, 30 s driving.
    out = []
    for t in range(120):
        has_fix = not (30 <= t < 90)
        out.append((t, north(15 * t), HOME[1], 15.0, has_fix))
    return out


def parse_coordinate(text, hemisphere, degree_digits):
    value = int(text[:degree_digits]) + float(text[degree_digits:]) / 60
    return -value if hemisphere in ("S", "W") else value


def retime(src, dest, start_at=None):
    shift = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) - START
    offset = None
    out = []
    for line in open(src):
        body = line.strip()[1:].split("*")[0]
        fields = body.split(",")
        if start_at and fields[0] in ("GPRMC", "GPGGA"):
            at = 3 if fields[0] == "GPRMC" else 2
            if fields[at]:
                lat = parse_coordinate(fields[at], fields[at + 1], 2)
                lon = parse_coordinate(fields[at + 2], fields[at + 3], 3)
                if offset is None:
                    offset = (start_at[0] - lat, start_at[1] - lon)
                fields[at], fields[at + 1] = coordinate(lat + offset[0], 2, "N", "S")
                fields[at + 2], fields[at + 3] = coordinate(lon + offset[1], 3, "E", "W")
        if fields[0] in ("GPRMC", "GPGGA"):
            when = datetime.datetime.strptime(fields[1].split(".")[0], "%H%M%S")
            if fields[0] == "GPRMC":
                date = datetime.datetime.strptime(fields[9], "%d%m%y")
                full = datetime.datetime(date.year, date.month, date.day, when.hour, when.minute, when.second,
                                         tzinfo=datetime.timezone.utc) + shift
                fields[9] = full.strftime("%d%m%y")
            else:
                full = datetime.datetime(START.year, START.month, START.day, when.hour, when.minute, when.second,
                                         tzinfo=datetime.timezone.utc) + shift
            fields[1] = full.strftime("%H%M%S") + ".00"
        out.append(sentence(",".join(fields)))
    open(dest, "w").write("".join(out))


def lead(src, dest, seconds):
    before = "".join(fix_sentences(START - datetime.timedelta(seconds=seconds - t), 0, 0, 0, False) for t in range(seconds))
    open(dest, "w", newline="").write(before + open(src, newline="").read())


if __name__ == "__main__":
    if sys.argv[1] == "make":
        for name, points in (("walk", walk()), ("drive-with-stop", drive_with_stop()), ("tunnel", tunnel())):
            open("%s/%s.nmea" % (sys.argv[2], name), "w", newline="").write(track(points))
    elif sys.argv[1] == "retime":
        start_at = tuple(float(x) for x in sys.argv[4].split(",")) if len(sys.argv) > 4 else None
        retime(sys.argv[2], sys.argv[3], start_at)
    elif sys.argv[1] == "lead":
        lead(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit("usage: nmea.py make DIR | lead SRC DEST SECONDS | retime SRC DEST [LAT,LON]")
