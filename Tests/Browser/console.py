"""The console in headless Chromium (Debian's chromium + chromium-driver, python3-selenium).

Usage: console.py URL BROKER_PORT ARTEFACTS_DIR ADVERTISEMENT_TOPIC ADVERTISEMENT_PAYLOAD ID
                  CONFIRM_TOPIC CONFIRM_PAYLOAD CONFIRM_ID CONFIRM_PRODUCT IRK

Loads the console, shows the picker, publishes the simulated advertisement to the broker
(mosquitto_pub) until the candidate appears, pairs it with a name, publishes it again so its
placement is decoded, renames it and removes it, all by clicking the page. Then pairs a
product that needs authorization (the second advertisement), authorizes it, and enters an
IRK for it, which the page must never show again. Saves a screenshot after each step and
prints a JSON summary on its last line.
"""
import json
import os
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

url, broker_port, artefacts, topic, payload, accessory = sys.argv[1:7]
confirm_topic, confirm_payload, confirm_id, confirm_product, irk = sys.argv[7:12]
os.makedirs(artefacts, exist_ok=True)

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1600,1000"):
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
summary = {"screenshots": []}


def shot(name):
    path = os.path.join(artefacts, name)
    driver.save_screenshot(path)
    summary["screenshots"].append(path)


def attempt(condition):
    # The page re-renders its tables on every update: an element found a moment ago may be gone.
    try:
        return condition()
    except (StaleElementReferenceException, NoSuchElementException, AttributeError):
        return None


def act(action):
    for _ in range(50):
        try:
            return action()
        except (StaleElementReferenceException, NoSuchElementException, AttributeError):
            time.sleep(0.1)
    return action()


def wait(condition, what, timeout=20):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: attempt(condition))
    except Exception:
        shot("failed.png")
        raise AssertionError("timed out waiting for " + what + "; page: " + driver.find_element(By.TAG_NAME, "main").text)


def row(table, identifier):
    rows = driver.find_elements(By.CSS_SELECTOR, "#" + table + " tr[data-id='" + identifier + "']")
    return rows[0] if rows else None


def publish(to=None, message=None):
    subprocess.run(
        ["mosquitto_pub", "-h", "127.0.0.1", "-p", broker_port, "-q", "1", "-t", to or topic, "-m", message or payload], check=True)


def cell(identifier, selector):
    return row("accessories", identifier).find_element(By.CSS_SELECTOR, selector)


try:
    driver.get(url)
    wait(lambda: driver.find_element(By.ID, "bridge-state").text == "online", "the bridge online")
    wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#accessories tr")) >= 1, "the accessory list")
    summary["accessories_at_start"] = len(driver.find_elements(By.CSS_SELECTOR, "#accessories tr"))
    shot("01-loaded.png")

    driver.find_element(By.ID, "picker-show").click()
    wait(lambda: "presented" in driver.find_element(By.ID, "picker-state").text, "the picker presented")
    deadline = time.time() + 20
    while row("candidates", accessory) is None and time.time() < deadline:
        publish()
        time.sleep(0.3)
    wait(lambda: row("candidates", accessory) is not None, "the candidate")
    summary["candidate"] = act(lambda: row("candidates", accessory).text)
    shot("02-candidate.png")

    act(lambda: row("candidates", accessory).find_element(By.CSS_SELECTOR, "button.choose").click())
    name = driver.find_element(By.ID, "select-name")
    name.clear()
    name.send_keys("Kitchen AirPods")
    driver.find_element(By.ID, "select-submit").click()
    wait(lambda: row("accessories", accessory) is not None, "the paired accessory in the list")
    wait(lambda: row("candidates", accessory) is None, "the picker dismissed")

    # Heard again once paired: its placement is decoded from the advertisement.
    deadline = time.time() + 20
    while time.time() < deadline and not attempt(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, ".placement").text):
        publish()
        time.sleep(0.3)
    wait(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, ".placement").text != "", "its placement")
    summary["paired_name"] = act(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, ".name").text)
    summary["placement"] = act(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, ".placement").text)
    shot("03-paired.png")

    # What is typed survives the table's re-rendering (the page keeps drafts).
    act(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, "input.rename-name").send_keys("Den AirPods"))
    act(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, "button.rename").click())
    wait(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, ".name").text == "Den AirPods", "the new name")
    summary["renamed"] = act(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, ".name").text)
    shot("04-renamed.png")

    act(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, "button.remove").click())
    summary["remove_asks"] = act(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, "button.remove").text)
    act(lambda: row("accessories", accessory).find_element(By.CSS_SELECTOR, "button.remove").click())
    wait(lambda: row("accessories", accessory) is None, "the accessory removed")
    summary["accessories_at_end"] = len(driver.find_elements(By.CSS_SELECTOR, "#accessories tr"))
    shot("05-removed.png")

    # A product with confirmAuthorization: paired as awaitingAuthorization, then authorized.
    driver.find_element(By.ID, "picker-products").send_keys(confirm_product)
    driver.find_element(By.ID, "picker-show").click()
    deadline = time.time() + 20
    while row("candidates", confirm_id) is None and time.time() < deadline:
        publish(confirm_topic, confirm_payload)
        time.sleep(0.3)
    wait(lambda: row("candidates", confirm_id) is not None, "the second candidate")
    act(lambda: row("candidates", confirm_id).find_element(By.CSS_SELECTOR, "button.choose").click())
    driver.find_element(By.ID, "select-submit").click()
    wait(lambda: "awaitingAuthorization" in cell(confirm_id, ".state").text, "awaitingAuthorization")
    summary["before_authorize"] = act(lambda: cell(confirm_id, ".state").text)
    shot("06-awaiting-authorization.png")
    act(lambda: cell(confirm_id, "button.authorize").click())
    wait(lambda: cell(confirm_id, ".state").text.startswith("authorized"), "authorized")
    summary["after_authorize"] = act(lambda: cell(confirm_id, ".state").text)

    # Keys: entered, sent, then only "set" is shown; the key is in no field and nowhere in the page.
    act(lambda: cell(confirm_id, "input.keys-irk").send_keys(irk))
    act(lambda: cell(confirm_id, "button.set-keys").click())
    wait(lambda: "IRK set" in cell(confirm_id, ".keys").text, "the IRK shown as set")
    summary["keys"] = act(lambda: cell(confirm_id, ".keys").text)
    values = driver.execute_script("return Array.from(document.querySelectorAll('input')).map((i) => i.value).join('|')")
    summary["irk_in_page"] = irk.lower() in (driver.page_source + values).lower()
    summary["log"] = driver.find_element(By.ID, "log").text
    shot("07-authorized-keys.png")
finally:
    driver.quit()

print(json.dumps(summary))
