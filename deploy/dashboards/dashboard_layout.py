"""Grafana dashboard JSON (schemaVersion 39, Grafana 10.x/11.x) from short panel descriptions.

Panels flow left to right on Grafana's 24-column grid and wrap; a row starts a new line.
Every panel queries the `datasource` template variable (a Prometheus-type data source).
"""

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
SCHEMA_VERSION = 39


def target(expr, legend="__auto", ref="A", fmt="time_series", instant=False):
    t = {
        "datasource": DATASOURCE,
        "editorMode": "code",
        "expr": expr,
        "legendFormat": legend,
        "refId": ref,
    }
    if fmt != "time_series":
        t["format"] = fmt
    t["instant"] = instant
    t["range"] = not instant
    return t


def targets(*exprs):
    """(expr, legend) pairs as targets A, B, ..."""
    return [target(e, l, chr(ord("A") + i)) for i, (e, l) in enumerate(exprs)]


def _panel(pid, kind, title, description, tgts, unit, w, h, **extra):
    p = {
        "id": pid,
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "gridPos": {"h": h, "w": w, "x": 0, "y": 0},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": tgts,
    }
    p.update(extra)
    return p


def timeseries(pid, title, description, tgts, unit="short", w=12, h=8,
               min_=None, max_=None, stack=False):
    p = _panel(pid, "timeseries", title, description, tgts, unit, w, h)
    d = p["fieldConfig"]["defaults"]
    d["custom"] = {"drawStyle": "line", "fillOpacity": 10, "lineWidth": 1,
                   "showPoints": "never", "spanNulls": False,
                   "stacking": {"group": "A", "mode": "normal" if stack else "none"}}
    if min_ is not None:
        d["min"] = min_
    if max_ is not None:
        d["max"] = max_
    p["options"] = {
        "legend": {"calcs": ["mean", "max"], "displayMode": "table",
                   "placement": "bottom", "showLegend": True},
        "tooltip": {"mode": "multi", "sort": "desc"},
    }
    return p


def stat(pid, title, description, tgts, unit="short", w=4, h=4, decimals=None):
    p = _panel(pid, "stat", title, description, tgts, unit, w, h)
    if decimals is not None:
        p["fieldConfig"]["defaults"]["decimals"] = decimals
    p["options"] = {
        "colorMode": "value", "graphMode": "area", "justifyMode": "auto",
        "orientation": "auto", "textMode": "auto",
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
    }
    return p


def table(pid, title, description, tgts, unit="short", w=12, h=8, hide=()):
    """Instant queries shown as rows; `hide` lists columns to drop besides Time."""
    for t in tgts:
        t["format"] = "table"
        t["instant"] = True
        t["range"] = False
    excluded = {"Time": True, "__name__": True}
    excluded.update({c: True for c in hide})
    transformations = [{"id": "organize", "options": {"excludeByName": excluded}}]
    if len(tgts) > 1:
        transformations.insert(0, {"id": "merge", "options": {}})
    p = _panel(pid, "table", title, description, tgts, unit, w, h,
               transformations=transformations)
    p["options"] = {"cellHeight": "sm", "showHeader": True,
                    "footer": {"show": False, "reducer": ["sum"], "fields": ""}}
    return p


def heatmap(pid, title, description, tgts, unit="short", w=12, h=8, buckets=False):
    """`buckets`: the targets are Prometheus histogram buckets (format heatmap); otherwise
    Grafana buckets the values of the series itself."""
    if buckets:
        for t in tgts:
            t["format"] = "heatmap"
            t["legendFormat"] = "{{le}}"
    p = _panel(pid, "heatmap", title, description, tgts, unit, w, h)
    p["options"] = {
        "calculate": not buckets,
        "cellGap": 1,
        "color": {"mode": "scheme", "scheme": "Oranges", "steps": 64, "exponent": 0.5,
                  "fill": "dark-orange", "reverse": False},
        "yAxis": {"axisPlacement": "left", "unit": unit},
        "tooltip": {"mode": "single", "yHistogram": False},
        "legend": {"show": True},
        "rowsFrame": {"layout": "auto"},
    }
    if buckets:
        p["options"]["calculation"] = {}
        p["options"]["yAxis"]["decimals"] = 0
    return p


def row(pid, title):
    return {"id": pid, "type": "row", "title": title, "collapsed": False, "panels": [],
            "gridPos": {"h": 1, "w": 24, "x": 0, "y": 0}}


def datasource_variable():
    return {"name": "datasource", "label": "Data source", "type": "datasource",
            "query": "prometheus", "current": {}, "hide": 0, "includeAll": False,
            "multi": False, "options": [], "refresh": 1, "regex": "", "skipUrlSync": False}


def query_variable(name, label, query, multi=True):
    """A label_values() variable; a multi-value one is used only in =~ matchers."""
    return {
        "name": name, "label": label, "type": "query", "datasource": DATASOURCE,
        "definition": query,
        "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "current": {}, "hide": 0, "includeAll": multi, "multi": multi, "options": [],
        "refresh": 2, "regex": "", "skipUrlSync": False, "sort": 1,
    }


def _layout(panels):
    x = y = line_h = 0
    for p in panels:
        g = p["gridPos"]
        if p["type"] == "row" or x + g["w"] > 24:
            y += line_h
            x = line_h = 0
        g["x"], g["y"] = x, y
        x += g["w"]
        line_h = max(line_h, g["h"])
        if p["type"] == "row":
            y += 1
            x = line_h = 0
    return panels


def dashboard(uid, title, description, tags, variables, panels):
    return {
        "annotations": {"list": [{
            "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts", "type": "dashboard"}]},
        "description": description,
        "editable": True,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "links": [{"asDropdown": True, "icon": "external link", "includeVars": False,
                   "keepTime": True, "tags": ["lens"], "targetBlank": False,
                   "title": "Lens dashboards", "type": "dashboards"}],
        "panels": _layout(panels),
        "refresh": "30s",
        "schemaVersion": SCHEMA_VERSION,
        "tags": tags,
        "templating": {"list": [datasource_variable()] + variables},
        "time": {"from": "now-1h", "to": "now"},
        "timepicker": {},
        "timezone": "",
        "title": title,
        "uid": uid,
        "version": 1,
        "weekStart": "",
    }
